/*
 * xrt.c - the core of xrt: everything that does not depend on a device.
 * MIT licensed; see LICENSE.
 *
 * Table of contents (sections appear in the order data flows):
 *   1. Platform and includes
 *   2. Errors: status names, the per-thread last error
 *  2b. Logging (XRT_LOG) and Chrome traces (XRT_TRACE)
 *   3. Memory: allocator, arena
 *   4. Types: dtypes, shapes, opcode names
 *   5. Parse: StableHLO text to IR
 *  5b. Normalize: one attribute form for pretty and generic syntax
 *   6. Verify: op constraints on the parsed IR (core ops, then the
 *      indexing, control-flow, linear-algebra and types families)
 *   7. Plugins: ABI checks, the call check for NULL entries
 *   8. Handles: generation-checked object handles
 *   9. Clients and devices
 *  9a. Contexts and plugins: loading, registry, topology, support queries
 *  9b. Device queues and events: worker threads, tasks, events
 *  10. Buffers (refcounted; transfers, sync and async)
 *  11. Host functions and the built-in check.* targets
 *  12. Programs and compilation
 *  12b. Compilation cache: keys, in-memory single-flight LRU, the
 *       persistent store
 *  13. Execution: single-device, MPMD and multi-device launches
 *  13a. Multi-process clients: global devices, launches across processes
 *  13b. Sharding specs, sharded arrays and pmap (also across processes)
 *  13c. Variables: format keys, atomic reshard, execution with donation,
 *       save and load (also across processes); client statistics and
 *       fault kinds
 *  14. NumPy files
 *  15. DLPack: export and import of buffers as DLManagedTensor
 */

/* ======================================================================
 * 1. Platform and includes
 * ==================================================================== */

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "xrt.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(_MSC_VER)
#define XRT__THREAD_LOCAL __declspec(thread)
#else
#define XRT__THREAD_LOCAL _Thread_local
#endif

#define XRT__UNUSED(x) ((void)(x))
#define XRT__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Operating system services ----
 *
 * Everything that differs between POSIX systems and Windows is here, behind
 * small xrt__os_* helpers; the rest of the file has no platform #ifdef.
 * Windows builds use mingw-w64 with its POSIX thread model, so pthreads
 * (winpthreads), <stdatomic.h> and _Thread_local work there as on Linux:
 * threads, mutexes and atomics are shared code.  What differs: dynamic
 * loading (LoadLibrary, GetProcAddress, FreeLibrary, with FormatMessage's
 * reasons), file identity, paths and directory listing (file names are
 * UTF-8, converted to UTF-16 for Windows), atomic replacement of a file
 * (MoveFileExW), aligned allocation (_aligned_malloc), the monotonic clock
 * and timed waits on it, and the CPU count.  Helpers that can fail return 0
 * or an errno value and write the system's reason into why[cap]. */

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
#define XRT__OS_HERE ".\\"
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
#define XRT__OS_HERE "./"
#define XRT__OS_PLUGIN_SEP ':'
#endif

/* A loaded library's symbol, as a function pointer (cast it to its type). */
typedef void (*xrt__os_fn)(void);
/* Two paths name one file iff their ids are equal. */
typedef struct xrt__os_file_id {
  uint64_t dev, ino;
} xrt__os_file_id;
/* Called per directory entry; nonzero stops the listing with that value. */
typedef int (*xrt__os_dir_fn)(void *ctx, const char *name);

#if defined(_WIN32)

/* errno for a Windows error code, so callers map failures one way. */
static int xrt__os_errno(DWORD e) {
  switch (e) {
  case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND:
  case ERROR_INVALID_NAME: case ERROR_BAD_NETPATH: case ERROR_INVALID_DRIVE:
    return ENOENT;
  case ERROR_ACCESS_DENIED: case ERROR_SHARING_VIOLATION:
  case ERROR_LOCK_VIOLATION:
    return EACCES;
  case ERROR_FILE_EXISTS: case ERROR_ALREADY_EXISTS: return EEXIST;
  case ERROR_DIRECTORY: return ENOTDIR;
  case ERROR_NOT_ENOUGH_MEMORY: case ERROR_OUTOFMEMORY: return ENOMEM;
  default: return EIO;
  }
}

/* FormatMessage's text for e, without its line break, and the code. */
static void xrt__os_reason(DWORD e, char *why, size_t cap) {
  char msg[512] = "";
  DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM |
                               FORMAT_MESSAGE_IGNORE_INSERTS,
                           NULL, e, 0, msg, (DWORD)sizeof msg, NULL);
  while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r' || msg[n - 1] == ' '))
    msg[--n] = 0;
  snprintf(why, cap, "%s (Windows error %lu)", n ? msg : "unknown error",
           (unsigned long)e);
}

/* The last error as errno, its reason in why. */
static int xrt__os_fail(char *why, size_t cap) {
  DWORD e = GetLastError();
  xrt__os_reason(e, why, cap);
  return xrt__os_errno(e);
}

/* UTF-8 to a malloc'd UTF-16 string; NULL (and EILSEQ or ENOMEM in *err)
 * when s is not UTF-8 or memory is out. */
static wchar_t *xrt__os_wide(const char *s, int *err) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
  wchar_t *w = n > 0 ? (wchar_t *)malloc((size_t)n * sizeof *w) : NULL;
  if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) > 0)
    return w;
  if (err) *err = n > 0 ? ENOMEM : EILSEQ;
  free(w);
  return NULL;
}

static int64_t xrt__os_now_ns(void) {
  static LARGE_INTEGER freq; /* constant since boot; races write the same */
  LARGE_INTEGER t;
  if (!freq.QuadPart) QueryPerformanceFrequency(&freq);
  QueryPerformanceCounter(&t);
  int64_t f = freq.QuadPart, c = t.QuadPart;
  return c / f * 1000000000 + c % f * 1000000000 / f;
}

static void xrt__os_sleep_ns(long ns) {
  Sleep((DWORD)((ns + 999999) / 1000000)); /* at least ns: 0 yields */
}

static int xrt__os_cpu_count(void) {
  DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
  return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

/* winpthreads' timed waits take the wall clock; xrt waits on a monotonic
 * deadline, so it waits relative to it and re-checks the deadline (an early
 * return from ms rounding is a spurious wakeup, not a timeout). */
static void xrt__os_cond_init(pthread_cond_t *cv) { pthread_cond_init(cv, NULL); }

static int xrt__os_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                                   int64_t deadline_ns) {
  int64_t left = deadline_ns - xrt__os_now_ns();
  if (left <= 0) return ETIMEDOUT;
  struct timespec rel = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
  int rc = pthread_cond_timedwait_relative_np(cv, mu, &rel);
  return rc == ETIMEDOUT && xrt__os_now_ns() < deadline_ns ? 0 : rc;
}

static void *xrt__os_aligned_alloc(size_t align, size_t size) {
  return _aligned_malloc(size ? size : 1, align);
}
static void xrt__os_aligned_free(void *p) { _aligned_free(p); }

static void *xrt__os_dl_open(const char *path, char *why, size_t cap) {
  int err = 0;
  wchar_t *w = xrt__os_wide(path, &err);
  if (!w) {
    snprintf(why, cap, "%s", strerror(err));
    return NULL;
  }
  /* The loader wants backslashes; no dialog box for a missing dependency
   * (this thread only); the library's own directory is searched for its
   * dependencies when the path is absolute. */
  for (wchar_t *c = w; *c; c++)
    if (*c == L'/') *c = L'\\';
  DWORD old = 0;
  SetThreadErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX, &old);
  bool abs = (path[0] && path[1] == ':') || path[0] == '\\' || path[0] == '/';
  HMODULE lib = LoadLibraryExW(w, NULL, abs ? LOAD_WITH_ALTERED_SEARCH_PATH : 0);
  if (!lib) xrt__os_fail(why, cap);
  SetThreadErrorMode(old, NULL);
  free(w);
  return (void *)lib;
}

static xrt__os_fn xrt__os_dl_sym(void *lib, const char *name, char *why,
                                 size_t cap) {
  FARPROC p = GetProcAddress((HMODULE)lib, name);
  if (!p) xrt__os_fail(why, cap);
  xrt__os_fn fn;
  memcpy(&fn, &p, sizeof fn);
  return fn;
}

static void xrt__os_dl_close(void *lib) { FreeLibrary((HMODULE)lib); }

/* Opens path for its attributes only (directories too). */
static HANDLE xrt__os_open_meta(const char *path, int *err, char *why,
                                size_t cap) {
  wchar_t *w = xrt__os_wide(path, err);
  if (!w) {
    snprintf(why, cap, "%s", strerror(*err));
    return INVALID_HANDLE_VALUE;
  }
  HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE |
                         FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                         FILE_FLAG_BACKUP_SEMANTICS, NULL);
  if (h == INVALID_HANDLE_VALUE) *err = xrt__os_fail(why, cap);
  free(w);
  return h;
}

static int xrt__os_file_identify(const char *path, xrt__os_file_id *id,
                                 bool *is_dir, char *why, size_t cap) {
  int err = 0;
  HANDLE h = xrt__os_open_meta(path, &err, why, cap);
  if (h == INVALID_HANDLE_VALUE) return err;
  BY_HANDLE_FILE_INFORMATION fi;
  if (!GetFileInformationByHandle(h, &fi)) err = xrt__os_fail(why, cap);
  CloseHandle(h);
  if (err) return err;
  id->dev = fi.dwVolumeSerialNumber;
  id->ino = (uint64_t)fi.nFileIndexHigh << 32 | fi.nFileIndexLow;
  *is_dir = (fi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
  return 0;
}

/* Whether path names a file without a directory ("x.dll"), which the
 * loader would look for in its own search path rather than here. */
static bool xrt__os_path_is_bare(const char *path) {
  return !strpbrk(path, "/\\:");
}

static int xrt__os_list_dir(const char *dir, xrt__os_dir_fn fn, void *ctx,
                            char *why, size_t cap) {
  size_t n = strlen(dir);
  char *pattern = (char *)malloc(n + 3);
  if (!pattern) {
    snprintf(why, cap, "out of memory");
    return ENOMEM;
  }
  snprintf(pattern, n + 3, "%s%s*", dir,
           n && (dir[n - 1] == '/' || dir[n - 1] == '\\') ? "" : "\\");
  int err = 0;
  wchar_t *w = xrt__os_wide(pattern, &err);
  free(pattern);
  if (!w) {
    snprintf(why, cap, "%s", strerror(err));
    return err;
  }
  WIN32_FIND_DATAW fd;
  HANDLE h = FindFirstFileW(w, &fd);
  free(w);
  if (h == INVALID_HANDLE_VALUE) return xrt__os_fail(why, cap);
  int rc = 0;
  do {
    char name[MAX_PATH * 4];
    if (WideCharToMultiByte(CP_UTF8, 0, fd.cFileName, -1, name, sizeof name,
                            NULL, NULL) > 0)
      rc = fn(ctx, name);
  } while (!rc && FindNextFileW(h, &fd));
  FindClose(h);
  return rc;
}

static FILE *xrt__os_fopen(const char *path, const char *mode) {
  wchar_t wmode[8];
  size_t i = 0;
  for (; mode[i] && i < 7; i++) wmode[i] = (wchar_t)mode[i];
  wmode[i] = 0;
  int err = 0;
  wchar_t *w = xrt__os_wide(path, &err);
  if (!w) {
    errno = err;
    return NULL;
  }
  FILE *f = _wfopen(w, wmode);
  free(w);
  return f;
}

/* Creates a new, empty file whose name is tmpl with its last six
 * characters (XXXXXX) made unique. */
static int xrt__os_temp_file(char *tmpl, char *why, size_t cap) {
  size_t n = strlen(tmpl);
  static _Atomic unsigned xrt__os_temp_seq;
  for (int tries = 0; tries < 100; tries++) {
    unsigned v = (unsigned)GetCurrentProcessId() * 2654435761u ^
                 (unsigned)GetTickCount() ^
                 atomic_fetch_add(&xrt__os_temp_seq, 1) * 40503u;
    for (size_t k = n - 6; k < n; k++, v >>= 5)
      tmpl[k] = "0123456789abcdefghijklmnopqrstuv"[v & 31];
    int err = 0;
    wchar_t *w = xrt__os_wide(tmpl, &err);
    if (!w) {
      snprintf(why, cap, "%s", strerror(err));
      return err;
    }
    HANDLE h = CreateFileW(w, GENERIC_WRITE, 0, NULL, CREATE_NEW,
                           FILE_ATTRIBUTE_NORMAL, NULL);
    free(w);
    if (h != INVALID_HANDLE_VALUE) {
      CloseHandle(h);
      return 0;
    }
    if (GetLastError() != ERROR_FILE_EXISTS) return xrt__os_fail(why, cap);
  }
  snprintf(why, cap, "no unused name like %s", tmpl);
  return EEXIST;
}

/* Replaces to with from in one step: readers see the old or the new file. */
static int xrt__os_replace_file(const char *from, const char *to, char *why,
                                size_t cap) {
  int err = 0;
  wchar_t *wf = xrt__os_wide(from, &err), *wt = wf ? xrt__os_wide(to, &err)
                                                   : NULL;
  if (wt && MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING |
                                    MOVEFILE_WRITE_THROUGH))
    err = 0;
  else if (wt)
    err = xrt__os_fail(why, cap);
  else
    snprintf(why, cap, "%s", strerror(err));
  free(wf);
  free(wt);
  return err;
}

#else /* POSIX */

static int64_t xrt__os_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void xrt__os_sleep_ns(long ns) {
  struct timespec ts = {(time_t)(ns / 1000000000), ns % 1000000000};
  nanosleep(&ts, NULL);
}

static int xrt__os_cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

/* Timed waits on the monotonic clock, immune to wall-clock changes. */
static void xrt__os_cond_init(pthread_cond_t *cv) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(cv, &ca);
  pthread_condattr_destroy(&ca);
}

static int xrt__os_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                                   int64_t deadline_ns) {
  struct timespec ts = {(time_t)(deadline_ns / 1000000000),
                        (long)(deadline_ns % 1000000000)};
  return pthread_cond_timedwait(cv, mu, &ts);
}

/* size is rounded up to a multiple of align, as C11 asks. */
static void *xrt__os_aligned_alloc(size_t align, size_t size) {
  size_t n = (size + align - 1) / align * align;
  return aligned_alloc(align, n ? n : align);
}
static void xrt__os_aligned_free(void *p) { free(p); }

static void *xrt__os_dl_open(const char *path, char *why, size_t cap) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, cap, "%s", e ? e : "unknown reason");
  }
  return lib;
}

static xrt__os_fn xrt__os_dl_sym(void *lib, const char *name, char *why,
                                 size_t cap) {
  dlerror();
  void *p = dlsym(lib, name);
  if (!p) {
    const char *e = dlerror();
    snprintf(why, cap, "%s", e ? e : "the symbol is NULL");
  }
  xrt__os_fn fn;
  memcpy(&fn, &p, sizeof fn); /* object to function pointer (POSIX) */
  return fn;
}

static void xrt__os_dl_close(void *lib) { dlclose(lib); }

static int xrt__os_file_identify(const char *path, xrt__os_file_id *id,
                                 bool *is_dir, char *why, size_t cap) {
  struct stat st;
  if (stat(path, &st) != 0) {
    int err = errno;
    snprintf(why, cap, "%s", strerror(err));
    return err;
  }
  id->dev = (uint64_t)st.st_dev;
  id->ino = (uint64_t)st.st_ino;
  *is_dir = S_ISDIR(st.st_mode);
  return 0;
}

/* Whether path names a file without a directory ("x.so"), which the
 * loader would look for in its own search path rather than here. */
static bool xrt__os_path_is_bare(const char *path) {
  return !strchr(path, '/');
}

static int xrt__os_list_dir(const char *dir, xrt__os_dir_fn fn, void *ctx,
                            char *why, size_t cap) {
  DIR *d = opendir(dir);
  if (!d) {
    int err = errno;
    snprintf(why, cap, "%s", strerror(err));
    return err;
  }
  int rc = 0;
  for (struct dirent *e; !rc && (e = readdir(d));) rc = fn(ctx, e->d_name);
  closedir(d);
  return rc;
}

static FILE *xrt__os_fopen(const char *path, const char *mode) {
  return fopen(path, mode);
}

/* Creates a new, empty file whose name is tmpl with its last six
 * characters (XXXXXX) made unique. */
static int xrt__os_temp_file(char *tmpl, char *why, size_t cap) {
  int fd = mkstemp(tmpl);
  if (fd < 0) {
    int err = errno;
    snprintf(why, cap, "%s", strerror(err));
    return err;
  }
  close(fd);
  return 0;
}

/* Replaces to with from in one step: readers see the old or the new file. */
static int xrt__os_replace_file(const char *from, const char *to, char *why,
                                size_t cap) {
  if (rename(from, to) == 0) return 0;
  int err = errno;
  snprintf(why, cap, "%s", strerror(err));
  return err;
}

#endif

/* ======================================================================
 * 2. Errors
 * ==================================================================== */

typedef struct xrt__error_state {
  xrt_status code;
  char message[2048];
} xrt__error_state;

static XRT__THREAD_LOCAL xrt__error_state xrt__error;

const char *xrt_strerror(xrt_status code) {
  switch (code) {
  case XRT_OK: return "OK";
  case XRT_CANCELLED: return "CANCELLED";
  case XRT_UNKNOWN: return "UNKNOWN";
  case XRT_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
  case XRT_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
  case XRT_NOT_FOUND: return "NOT_FOUND";
  case XRT_ALREADY_EXISTS: return "ALREADY_EXISTS";
  case XRT_PERMISSION_DENIED: return "PERMISSION_DENIED";
  case XRT_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
  case XRT_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
  case XRT_ABORTED: return "ABORTED";
  case XRT_OUT_OF_RANGE: return "OUT_OF_RANGE";
  case XRT_UNIMPLEMENTED: return "UNIMPLEMENTED";
  case XRT_INTERNAL: return "INTERNAL";
  case XRT_UNAVAILABLE: return "UNAVAILABLE";
  case XRT_DATA_LOSS: return "DATA_LOSS";
  case XRT_UNAUTHENTICATED: return "UNAUTHENTICATED";
  case XRT_CHECK_FAILED: return "CHECK_FAILED";
  }
  return "UNKNOWN_STATUS";
}

const char *xrt_last_error(void) { return xrt__error.message; }
xrt_status xrt_last_status(void) { return xrt__error.code; }

static void xrt__log_failure(xrt_status code, const char *message);

/* Records a failure for xrt_last_error() and returns its code, so that
 * callers can write `return xrt__fail(...)`. */
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
static xrt_status xrt__fail(xrt_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(xrt__error.message, sizeof xrt__error.message, fmt, ap);
  va_end(ap);
  xrt__error.code = code;
  xrt__log_failure(code, xrt__error.message); /* debug level, section 2b */
  return code;
}

/* For xrt_cache.c (same library, another translation unit): records its
 * failures as xrt__fail does.  Not in xrt.h; tools/libxrt.map keeps it
 * out of libxrt.so's exports. */
xrt_status xrt__set_error(xrt_status code, const char *message);
xrt_status xrt__set_error(xrt_status code, const char *message) {
  return xrt__fail(code, "%s", message);
}

/* A plugin's error message, terminated (a plugin may fill all of it
 * without a NUL) and never empty. */
static const char *xrt__plugin_msg(xrt_plugin_error *err) {
  err->message[sizeof err->message - 1] = 0;
  return err->message[0] ? err->message : "(no message)";
}

/* Adopts a plugin's failure as this thread's last error. */
static xrt_status xrt__fail_plugin(xrt_status code, const char *plugin,
                                   const xrt_plugin_error *err) {
  if (code == XRT_OK) code = XRT_INTERNAL; /* a plugin must not fail with OK */
  const char *msg = err->message[0] ? err->message : "(no message)";
  return xrt__fail(code, "%s: %.*s", plugin, (int)sizeof err->message, msg);
}

#define XRT__CHECK_ARG(cond, what)                                          \
  do {                                                                      \
    if (!(cond)) return xrt__fail(XRT_INVALID_ARGUMENT, "%s: %s", __func__, \
                                  what);                                    \
  } while (0)

/* ======================================================================
 * 2b. Logging and tracing
 *
 * Logging.  Every component has a level: the fixed components of xrt plus
 * a few more named in a spec (plugins' own names); a component not named
 * uses the default.  xrt__log_max holds the highest level of any
 * component, so that a disabled message costs one relaxed atomic load;
 * it starts above every level, which sends the first caller through the
 * lazy read of XRT_LOG (pthread_once).  Messages are formatted on the
 * stack and go to the callback or, as one fputs per line, to stderr.
 *
 * Tracing.  A Chrome trace-event file: {"traceEvents":[ ... ]} with "M"
 * events naming each client's process ("xrt client N (sim)") and tracks
 * (tid 0 "host", tid i+1 "device i") and "X" complete events (ts and dur
 * in microseconds from the trace's start).  Events are appended to a
 * memory buffer under one mutex and written in chunks; a failed write
 * stops the trace (with a log line), never the caller.  Clients are kept
 * in a small registry (their trace pid, name, device count and the host
 * services table handed to their plugin), so a trace started after a
 * client was created still names its tracks.
 * ==================================================================== */

struct xrt__client;

/* ---- logging ---- */

static const char *const xrt__log_level_names[] = {
    "off", "error", "warn", "info", "debug", "trace"};
static const char *const xrt__log_known[] = {
    "core", "parse", "compile", "exec", "buffer", "plugin", "var", "cache"};
#define XRT__LOG_KNOWN ((int)XRT__ARRAY_SIZE(xrt__log_known))
#define XRT__LOG_EXTRA 16   /* other components a spec may name */
#define XRT__LOG_NAME_CAP 32
#define XRT__LOG_UNSET 255  /* xrt__log_max before XRT_LOG is read */

static _Atomic int xrt__log_max = XRT__LOG_UNSET;
static _Atomic int xrt__log_default = XRT_LOG_WARN;
/* A component's level, or -1: the default. */
static _Atomic int xrt__log_levels[XRT__LOG_KNOWN + XRT__LOG_EXTRA];
/* Extra names are only appended (under xrt__log_cfg_mu) and published by
 * xrt__log_num_extra, so readers need no lock. */
static char xrt__log_extra[XRT__LOG_EXTRA][XRT__LOG_NAME_CAP];
static _Atomic int xrt__log_num_extra;
static pthread_once_t xrt__log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t xrt__log_cfg_mu = PTHREAD_MUTEX_INITIALIZER;
/* Held for reading while a message is delivered, so that once
 * xrt_log_set_callback returns the old callback is no longer running. */
static pthread_rwlock_t xrt__log_cb_mu = PTHREAD_RWLOCK_INITIALIZER;
static xrt_log_fn xrt__log_fn;
static void *xrt__log_user;

/* The slot of a component, or -1 for one never named. */
static int xrt__log_slot(const char *component) {
  if (!component) return -1;
  for (int i = 0; i < XRT__LOG_KNOWN; i++)
    if (strcmp(component, xrt__log_known[i]) == 0) return i;
  int n = atomic_load_explicit(&xrt__log_num_extra, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (strcmp(component, xrt__log_extra[i]) == 0) return XRT__LOG_KNOWN + i;
  return -1;
}

static int xrt__log_level_of(const char *component) {
  int slot = xrt__log_slot(component);
  int l = slot < 0 ? -1 : atomic_load_explicit(&xrt__log_levels[slot],
                                               memory_order_relaxed);
  return l >= 0 ? l
                : atomic_load_explicit(&xrt__log_default, memory_order_relaxed);
}

/* A level name (any case) or digit; -1 if it is neither. */
static int xrt__log_parse_level(const char *s, size_t n) {
  if (n == 1 && s[0] >= '0' && s[0] <= '5') return s[0] - '0';
  for (int l = 0; l < (int)XRT__ARRAY_SIZE(xrt__log_level_names); l++) {
    const char *name = xrt__log_level_names[l];
    size_t i = 0;
    while (i < n && name[i] && (s[i] | 0x20) == name[i]) i++;
    if (i == n && !name[i]) return l;
  }
  if (n == 7 && strncmp(s, "warning", 7) == 0) return XRT_LOG_WARN;
  return -1;
}

static bool xrt__log_name_ok(const char *s, size_t n) {
  if (n == 0 || n >= XRT__LOG_NAME_CAP) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
      return false;
  }
  return true;
}

/* The next comma-separated token of *s, spaces trimmed. */
static bool xrt__log_token(const char **s, const char **tok, size_t *n) {
  const char *p = *s;
  if (!*p) return false;
  const char *e = strchr(p, ',');
  if (!e) e = p + strlen(p);
  *s = *e ? e + 1 : e;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
  *tok = p;
  *n = (size_t)(e - p);
  return true;
}

/* Applies spec ("level[,component...]"); on error writes why to why and
 * changes nothing.  Under xrt__log_cfg_mu. */
static bool xrt__log_apply(const char *spec, char *why, size_t cap) {
  const char *s = spec, *tok;
  size_t n;
  int level = XRT_LOG_WARN;
  if (xrt__log_token(&s, &tok, &n) && n &&
      (level = xrt__log_parse_level(tok, n)) < 0) {
    snprintf(why, cap, "unknown level '%.*s' (use off, error, warn, info, "
             "debug or trace)", (int)(n > 64 ? 64 : n), tok);
    return false;
  }
  /* Check every component before changing anything: names[] holds the
   * components, new ones (not yet in a slot) counted in fresh. */
  char names[XRT__LOG_KNOWN + XRT__LOG_EXTRA][XRT__LOG_NAME_CAP];
  int count = 0, fresh = 0;
  int extra = atomic_load_explicit(&xrt__log_num_extra, memory_order_relaxed);
  while (xrt__log_token(&s, &tok, &n)) {
    if (!n) continue;
    if (!xrt__log_name_ok(tok, n)) {
      snprintf(why, cap, "bad component name '%.*s' (letters, digits, '_', "
               "'-' and '.', at most %d)", (int)(n > 64 ? 64 : n), tok,
               XRT__LOG_NAME_CAP - 1);
      return false;
    }
    char name[XRT__LOG_NAME_CAP];
    memcpy(name, tok, n);
    name[n] = 0;
    bool dup = false;
    for (int i = 0; i < count && !dup; i++) dup = strcmp(names[i], name) == 0;
    if (dup) continue;
    if (count == (int)XRT__ARRAY_SIZE(names) ||
        (xrt__log_slot(name) < 0 && extra + ++fresh > XRT__LOG_EXTRA)) {
      snprintf(why, cap, "too many components (at most %d besides xrt's)",
               XRT__LOG_EXTRA);
      return false;
    }
    memcpy(names[count++], name, n + 1);
  }
  for (int i = 0; i < XRT__LOG_KNOWN + XRT__LOG_EXTRA; i++)
    atomic_store_explicit(&xrt__log_levels[i], -1, memory_order_relaxed);
  int max = count ? XRT_LOG_WARN : level;
  for (int i = 0; i < count; i++) {
    int slot = xrt__log_slot(names[i]);
    if (slot < 0) { /* a new extra name, published before it is used */
      int k = atomic_load_explicit(&xrt__log_num_extra, memory_order_relaxed);
      memcpy(xrt__log_extra[k], names[i], sizeof names[i]);
      atomic_store_explicit(&xrt__log_num_extra, k + 1, memory_order_release);
      slot = XRT__LOG_KNOWN + k;
    }
    atomic_store_explicit(&xrt__log_levels[slot], level, memory_order_relaxed);
    if (level > max) max = level;
  }
  atomic_store_explicit(&xrt__log_default, count ? XRT_LOG_WARN : level,
                        memory_order_relaxed);
  atomic_store_explicit(&xrt__log_max, max, memory_order_release);
  return true;
}

/* Reads XRT_LOG once (a bad value is reported on stderr and ignored). */
static void xrt__log_init(void) {
  pthread_mutex_lock(&xrt__log_cfg_mu);
  for (int i = 0; i < XRT__LOG_KNOWN + XRT__LOG_EXTRA; i++)
    atomic_store_explicit(&xrt__log_levels[i], -1, memory_order_relaxed);
  const char *env = getenv("XRT_LOG");
  char why[256];
  if (env && *env && !xrt__log_apply(env, why, sizeof why)) {
    char line[512];
    snprintf(line, sizeof line, "xrt warn core: XRT_LOG=%.128s ignored: %s\n",
             env, why);
    fputs(line, stderr);
  }
  if (atomic_load(&xrt__log_max) == XRT__LOG_UNSET)
    atomic_store_explicit(&xrt__log_max, XRT_LOG_WARN, memory_order_release);
  pthread_mutex_unlock(&xrt__log_cfg_mu);
}

bool xrt_log_enabled(xrt_log_level level, const char *component) {
  if ((int)level > atomic_load_explicit(&xrt__log_max, memory_order_relaxed))
    return false; /* the common case */
  if ((int)level <= XRT_LOG_OFF || (int)level > XRT_LOG_TRACE) return false;
  pthread_once(&xrt__log_once, xrt__log_init);
  return (int)level <= xrt__log_level_of(component);
}

xrt_status xrt_log_configure(const char *spec) {
  XRT__CHECK_ARG(spec, "spec is NULL");
  pthread_once(&xrt__log_once, xrt__log_init); /* XRT_LOG comes first */
  char why[256];
  pthread_mutex_lock(&xrt__log_cfg_mu);
  bool ok = xrt__log_apply(spec, why, sizeof why);
  pthread_mutex_unlock(&xrt__log_cfg_mu);
  if (!ok)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_log_configure(\"%.128s\"): %s",
                     spec, why);
  return XRT_OK;
}

void xrt_log_set_callback(xrt_log_fn fn, void *user) {
  pthread_rwlock_wrlock(&xrt__log_cb_mu);
  xrt__log_fn = fn;
  xrt__log_user = fn ? user : NULL;
  pthread_rwlock_unlock(&xrt__log_cb_mu);
}

/* Delivers one message (the caller checked the level). */
static void xrt__log_emitv(xrt_log_level level, const char *component,
                           const char *fmt, va_list ap) {
  char msg[1024];
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  if (n < 0) snprintf(msg, sizeof msg, "(bad log format)");
  else if ((size_t)n >= sizeof msg) memcpy(msg + sizeof msg - 4, "...", 4);
  if (!component) component = "core";
  pthread_rwlock_rdlock(&xrt__log_cb_mu);
  if (xrt__log_fn) {
    xrt__log_fn(xrt__log_user, level, component, msg);
  } else {
    char line[1200];
    snprintf(line, sizeof line, "xrt %s %s: %s\n",
             xrt__log_level_names[level], component, msg);
    fputs(line, stderr);
  }
  pthread_rwlock_unlock(&xrt__log_cb_mu);
}

void xrt_log(xrt_log_level level, const char *component, const char *fmt,
             ...) {
  if (!fmt || !xrt_log_enabled(level, component)) return;
  va_list ap;
  va_start(ap, fmt);
  xrt__log_emitv(level, component, fmt, ap);
  va_end(ap);
}

/* Logs a printf-style message under component at level. */
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(3, 4)
#endif
static inline void xrt__log(xrt_log_level level, const char *component,
                            const char *fmt, ...) {
  if (!xrt_log_enabled(level, component)) return;
  va_list ap;
  va_start(ap, fmt);
  xrt__log_emitv(level, component, fmt, ap);
  va_end(ap);
}

/* xrt__fail's hook: failures returned to the user, at debug level. */
static void xrt__log_failure(xrt_status code, const char *message) {
  if (xrt_log_enabled(XRT_LOG_DEBUG, "core"))
    xrt__log(XRT_LOG_DEBUG, "core", "returning %s: %s", xrt_strerror(code),
             message);
}

/* ---- tracing ---- */

/* Monotonic clock of the trace, in nanoseconds. */
static inline int64_t xrt__now_ns(void) { return xrt__os_now_ns(); }

static _Atomic int xrt__trace_active;

/* Whether a trace is recording (cheap: check before taking times). */
static inline bool xrt__trace_on(void) {
  return atomic_load_explicit(&xrt__trace_active, memory_order_relaxed) != 0;
}

/* The start time of a traced span: 0 when no trace is recording (the
 * clock never reads 0, so 0 means "do not record"). */
static inline int64_t xrt__trace_begin(void) {
  if (!xrt__trace_on()) return 0;
  int64_t t = xrt__now_ns();
  return t ? t : 1;
}

/* A client as traces know it. */
typedef struct xrt__trace_client {
  struct xrt__trace_client *next;
  const struct xrt__client *c;
  int pid;           /* "xrt client <pid>" */
  int num_devices;   /* 0 until the client is open */
  bool named;        /* its "M" events are in the current trace */
  char plugin[64];
  xrt_plugin_host_api host; /* handed to the plugin (ctx: the client) */
  xrt_allocator al;         /* the client's, which this entry came from */
} xrt__trace_client;

#define XRT__TRACE_BUF (64 * 1024)

/* Everything below is guarded by xrt__trace_mu. */
static pthread_mutex_t xrt__trace_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  FILE *f;            /* NULL: no trace */
  char path[512];
  int64_t t0;         /* the trace's start, ns */
  bool first;         /* no event written yet */
  bool failed;        /* a write failed: the trace stopped */
  size_t len;
  char buf[XRT__TRACE_BUF];
  xrt__trace_client *clients;
  int next_pid;
} xrt__tr;

/* Writes the buffer out; a failure stops the trace (logged). */
static void xrt__trace_flush(void) {
  if (!xrt__tr.f || xrt__tr.failed) {
    xrt__tr.len = 0;
    return;
  }
  size_t n = xrt__tr.len;
  xrt__tr.len = 0;
  if (n == 0 || fwrite(xrt__tr.buf, 1, n, xrt__tr.f) == n) return;
  int err = errno;
  xrt__tr.failed = true;
  atomic_store_explicit(&xrt__trace_active, 0, memory_order_relaxed);
  xrt__log(XRT_LOG_ERROR, "core", "trace: writing %s failed (%s); tracing "
           "stopped", xrt__tr.path, strerror(err));
}

static void xrt__trace_put(const char *s, size_t n) {
  while (n) {
    if (xrt__tr.len == sizeof xrt__tr.buf) xrt__trace_flush();
    size_t k = sizeof xrt__tr.buf - xrt__tr.len;
    if (k > n) k = n;
    memcpy(xrt__tr.buf + xrt__tr.len, s, k);
    xrt__tr.len += k;
    s += k;
    n -= k;
  }
}

static void xrt__trace_puts(const char *s) { xrt__trace_put(s, strlen(s)); }

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(1, 2)
#endif
static void xrt__trace_printf(const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) xrt__trace_put(tmp, (size_t)n < sizeof tmp ? (size_t)n
                                                         : sizeof tmp - 1);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t xrt__utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t k = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (c >= 0xF5 || k == 0 || k > n) return 0;
  for (size_t i = 1; i < k; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  unsigned c1 = s[1];
  if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) ||
      (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))
    return 0; /* overlong, surrogate or beyond U+10FFFF */
  return k;
}

/* s as the contents of a JSON string (at most 512 bytes of it): quotes,
 * backslashes and control characters escaped, invalid UTF-8 as U+FFFD. */
static void xrt__trace_put_escaped(const char *str) {
  const unsigned char *s = (const unsigned char *)str;
  size_t n = strlen(str);
  if (n > 512) n = 512;
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    char esc[8];
    if (c == '"' || c == '\\') {
      esc[0] = '\\', esc[1] = (char)c;
      xrt__trace_put(esc, 2);
      i++;
    } else if (c < 0x20 || c == 0x7F) {
      snprintf(esc, sizeof esc, "\\u%04x", c);
      xrt__trace_put(esc, 6);
      i++;
    } else if (c < 0x80) {
      size_t j = i;
      while (j < n && s[j] >= 0x20 && s[j] < 0x7F && s[j] != '"' &&
             s[j] != '\\')
        j++;
      xrt__trace_put(str + i, j - i);
      i = j;
    } else {
      size_t k = xrt__utf8_len(s + i, n - i);
      if (k) xrt__trace_put(str + i, k);
      else xrt__trace_puts("\\ufffd");
      i += k ? k : 1;
    }
  }
}

/* One "M" event: name is process_name or thread_name etc.  value_key is
 * "name" (a string value) or "sort_index" (a number). */
static void xrt__trace_meta(int pid, int tid, const char *what,
                            const char *name, int sort_index) {
  xrt__trace_puts(xrt__tr.first ? "\n" : ",\n");
  xrt__tr.first = false;
  xrt__trace_printf("{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\","
                    "\"args\":{", pid, tid, what);
  if (name) {
    xrt__trace_puts("\"name\":\"");
    xrt__trace_put_escaped(name);
    xrt__trace_puts("\"}}");
  } else {
    xrt__trace_printf("\"sort_index\":%d}}", sort_index);
  }
}

/* The "M" events naming a client's process and tracks. */
static void xrt__trace_name_client(xrt__trace_client *tc) {
  if (!xrt__tr.f || tc->named || tc->num_devices <= 0) return;
  char name[128];
  snprintf(name, sizeof name, "xrt client %d (%s)", tc->pid, tc->plugin);
  xrt__trace_meta(tc->pid, 0, "process_name", name, 0);
  xrt__trace_meta(tc->pid, 0, "process_sort_index", NULL, tc->pid);
  xrt__trace_meta(tc->pid, 0, "thread_name", "host", 0);
  xrt__trace_meta(tc->pid, 0, "thread_sort_index", NULL, 0);
  for (int i = 0; i < tc->num_devices; i++) {
    snprintf(name, sizeof name, "device %d", i);
    xrt__trace_meta(tc->pid, i + 1, "thread_name", name, 0);
    xrt__trace_meta(tc->pid, i + 1, "thread_sort_index", NULL, i + 1);
  }
  tc->named = true;
}

static xrt__trace_client *xrt__trace_find(const struct xrt__client *c) {
  for (xrt__trace_client *tc = xrt__tr.clients; tc; tc = tc->next)
    if (tc->c == c) return tc;
  return NULL;
}

/* Writes the end of the trace and closes it.  Under xrt__trace_mu. */
static xrt_status xrt__trace_finish_locked(void) {
  if (!xrt__tr.f) return XRT_OK;
  atomic_store_explicit(&xrt__trace_active, 0, memory_order_relaxed);
  xrt__trace_puts("\n],\"displayTimeUnit\":\"ms\"}\n");
  xrt__trace_flush();
  bool failed = xrt__tr.failed;
  if (fclose(xrt__tr.f) != 0) failed = true;
  xrt__tr.f = NULL;
  xrt__tr.failed = false;
  for (xrt__trace_client *tc = xrt__tr.clients; tc; tc = tc->next)
    tc->named = false;
  if (failed)
    return xrt__fail(XRT_DATA_LOSS, "xrt_trace_stop: writing the trace %s "
                     "failed; it is incomplete", xrt__tr.path);
  return XRT_OK;
}

xrt_status xrt_trace_stop(void) {
  pthread_mutex_lock(&xrt__trace_mu);
  xrt_status s = xrt__trace_finish_locked();
  pthread_mutex_unlock(&xrt__trace_mu);
  return s;
}

static void xrt__trace_atexit(void) { xrt_trace_stop(); }
static void xrt__trace_register_atexit(void) { atexit(xrt__trace_atexit); }
static pthread_once_t xrt__trace_atexit_once = PTHREAD_ONCE_INIT;

xrt_status xrt_trace_start(const char *path) {
  XRT__CHECK_ARG(path && *path, "path is NULL or empty");
  XRT__CHECK_ARG(strlen(path) < sizeof xrt__tr.path, "path is too long");
  pthread_once(&xrt__trace_atexit_once, xrt__trace_register_atexit);
  pthread_mutex_lock(&xrt__trace_mu);
  xrt__trace_finish_locked(); /* the file is complete, even if it failed */
  FILE *f = xrt__os_fopen(path, "w");
  if (!f) {
    int err = errno;
    pthread_mutex_unlock(&xrt__trace_mu);
    xrt_status code = err == EACCES || err == EPERM || err == EROFS
                          ? XRT_PERMISSION_DENIED
                      : err == ENOENT || err == ENOTDIR ? XRT_NOT_FOUND
                                                         : XRT_UNAVAILABLE;
    return xrt__fail(code, "xrt_trace_start: cannot create %s: %s", path,
                     strerror(err));
  }
  setvbuf(f, NULL, _IONBF, 0); /* xrt__tr.buf is the buffer: errors show */
  xrt__tr.f = f;
  snprintf(xrt__tr.path, sizeof xrt__tr.path, "%s", path);
  xrt__tr.t0 = xrt__now_ns();
  xrt__tr.first = true;
  xrt__tr.failed = false;
  xrt__tr.len = 0;
  xrt__trace_puts("{\"traceEvents\":[");
  for (xrt__trace_client *tc = xrt__tr.clients; tc; tc = tc->next)
    xrt__trace_name_client(tc);
  atomic_store_explicit(&xrt__trace_active, 1, memory_order_relaxed);
  pthread_mutex_unlock(&xrt__trace_mu);
  xrt__log(XRT_LOG_INFO, "core", "tracing to %s", path);
  return XRT_OK;
}

bool xrt_trace_enabled(void) { return xrt__trace_on(); }

/* Writes v in decimal at q; returns the end.  (snprintf's number
 * formatting was most of the cost of a traced dispatch.) */
static char *xrt__trace_itoa(char *q, uint64_t v) {
  char tmp[24];
  int n = 0;
  do tmp[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (n) *q++ = tmp[--n];
  return q;
}

/* ns as microseconds with three decimals ("12.345"). */
static char *xrt__trace_us(char *q, int64_t ns) {
  uint64_t v = ns < 0 ? 0 : (uint64_t)ns;
  q = xrt__trace_itoa(q, v / 1000);
  unsigned f = (unsigned)(v % 1000);
  q[0] = '.';
  q[1] = (char)('0' + f / 100);
  q[2] = (char)('0' + f / 10 % 10);
  q[3] = (char)('0' + f % 10);
  return q + 4;
}

static char *xrt__trace_cat(char *q, const char *s) {
  size_t n = strlen(s);
  memcpy(q, s, n);
  return q + n;
}

/* Records one complete event on client c's track of device (-1: the
 * client's host track).  cat: "transfer", "execute", "collective",
 * "reshard", "compile", "cache"; name is copied. */
static inline void xrt__trace_complete(const struct xrt__client *c, int device,
                                       const char *cat, const char *name,
                                       int64_t t0_ns, int64_t t1_ns) {
  if (!xrt__trace_on()) return;
  pthread_mutex_lock(&xrt__trace_mu);
  if (xrt__tr.f && !xrt__tr.failed) {
    xrt__trace_client *tc = xrt__trace_find(c);
    if (tc) xrt__trace_name_client(tc);
    if (device < -1 || (tc && device >= tc->num_devices)) device = -1;
    /* Spans that began before the trace did are cut at its start. */
    if (t0_ns < xrt__tr.t0) t0_ns = xrt__tr.t0;
    if (t1_ns < t0_ns) t1_ns = t0_ns;
    xrt__trace_puts(xrt__tr.first ? "\n" : ",\n");
    xrt__tr.first = false;
    xrt__trace_puts("{\"ph\":\"X\",\"cat\":\"");
    xrt__trace_put_escaped(cat ? cat : "");
    xrt__trace_puts("\",\"name\":\"");
    xrt__trace_put_escaped(name ? name : "");
    char tail[160], *q = tail;
    q = xrt__trace_cat(q, "\",\"pid\":");
    q = xrt__trace_itoa(q, (uint64_t)(tc ? tc->pid : 0));
    q = xrt__trace_cat(q, ",\"tid\":");
    q = xrt__trace_itoa(q, (uint64_t)(device + 1));
    q = xrt__trace_cat(q, ",\"ts\":");
    q = xrt__trace_us(q, t0_ns - xrt__tr.t0);
    q = xrt__trace_cat(q, ",\"dur\":");
    q = xrt__trace_us(q, t1_ns - t0_ns);
    *q++ = '}';
    xrt__trace_put(tail, (size_t)(q - tail));
  }
  pthread_mutex_unlock(&xrt__trace_mu);
}

/* An event ending now named "prefix.name" ("name" when prefix is empty). */
static void xrt__trace_named(const struct xrt__client *c, int device,
                             const char *cat, const char *prefix,
                             const char *name, int64_t t0_ns) {
  int64_t t1 = xrt__now_ns();
  char full[600];
  size_t np = prefix ? strnlen(prefix, 256) : 0;
  size_t nn = name ? strnlen(name, 256) : 0;
  if (np) memcpy(full, prefix, np);
  if (np) full[np++] = '.';
  if (nn) memcpy(full + np, name, nn);
  full[np + nn] = 0;
  xrt__trace_complete(c, device, cat, full, t0_ns, t1);
}

/* A transfer ending now: "h2d 4x4xf32" (dir: h2d, d2h, d2d). */
static void xrt__trace_transfer(const struct xrt__client *c, int device,
                                const char *dir, const xrt_shape *shape,
                                int64_t t0_ns) {
  int64_t t1 = xrt__now_ns();
  char name[256];
  size_t n = (size_t)snprintf(name, sizeof name, "%s ", dir);
  for (int32_t i = 0; shape && i < shape->rank && i < XRT_MAX_RANK &&
                      n < sizeof name; i++)
    n += (size_t)snprintf(name + n, sizeof name - n, "%" PRId64 "x",
                          shape->dims[i]);
  if (n < sizeof name)
    snprintf(name + n, sizeof name - n, "%s",
             shape ? xrt_dtype_name(shape->dtype) : "?");
  xrt__trace_complete(c, device, "transfer", name, t0_ns, t1);
}

/* ---- the client registry and the plugin's host services ---- */

static void xrt__host_log(void *ctx, xrt_log_level level,
                          const char *component, const char *message) {
  XRT__UNUSED(ctx);
  if (message && xrt_log_enabled(level, component))
    xrt__log(level, component, "%s", message);
}

static bool xrt__host_trace_enabled(void *ctx) {
  XRT__UNUSED(ctx);
  return xrt__trace_on();
}

static void xrt__host_trace_event(void *ctx, int device, const char *category,
                                  const char *name, int64_t start_ns,
                                  int64_t end_ns) {
  xrt__trace_complete((const struct xrt__client *)ctx, device,
                      category ? category : "plugin", name ? name : "",
                      start_ns, end_ns);
}

static int64_t xrt__host_now_ns(void *ctx) {
  XRT__UNUSED(ctx);
  return xrt__now_ns();
}

/* c's registry entry, made on first use from c's allocator a; NULL when
 * out of memory.  Under xrt__trace_mu. */
static xrt__trace_client *xrt__trace_client_of(struct xrt__client *c,
                                               const xrt_allocator *a) {
  xrt__trace_client *tc = xrt__trace_find(c);
  if (tc) return tc;
  tc = (xrt__trace_client *)a->alloc(a->self, sizeof *tc);
  if (!tc) return NULL;
  memset(tc, 0, sizeof *tc);
  tc->al = *a;
  tc->c = c;
  tc->pid = ++xrt__tr.next_pid;
  tc->host.struct_size = sizeof tc->host;
  tc->host.ctx = c;
  tc->host.log = xrt__host_log;
  tc->host.trace_enabled = xrt__host_trace_enabled;
  tc->host.trace_event = xrt__host_trace_event;
  tc->host.now_ns = xrt__host_now_ns;
  tc->next = xrt__tr.clients;
  xrt__tr.clients = tc;
  return tc;
}

/* The services table handed to a plugin's client_create (args.host);
 * valid until xrt__trace_client_closed(c).  NULL when out of memory. */
static inline const xrt_plugin_host_api *xrt__host_api_for(
    struct xrt__client *c, const xrt_allocator *a) {
  pthread_mutex_lock(&xrt__trace_mu);
  xrt__trace_client *tc = xrt__trace_client_of(c, a);
  pthread_mutex_unlock(&xrt__trace_mu);
  return tc ? &tc->host : NULL;
}

/* XRT_TRACE=file.json starts a trace at the first client creation. */
static void xrt__trace_env_read(void) {
  const char *path = getenv("XRT_TRACE");
  if (!path || !*path || xrt__trace_on()) return;
  if (xrt_trace_start(path))
    xrt__log(XRT_LOG_WARN, "core", "XRT_TRACE ignored: %s", xrt_last_error());
}
static pthread_once_t xrt__trace_env_once = PTHREAD_ONCE_INIT;

/* Client creation's hook: reads XRT_TRACE the first time, registers the
 * client and names its tracks in a trace in progress. */
static void xrt__trace_client_opened(struct xrt__client *c,
                                     const char *plugin, int num_devices) {
  pthread_once(&xrt__trace_env_once, xrt__trace_env_read);
  pthread_mutex_lock(&xrt__trace_mu);
  xrt__trace_client *tc = xrt__trace_find(c); /* made by xrt__host_api_for */
  int pid = tc ? tc->pid : 0;
  if (tc) {
    snprintf(tc->plugin, sizeof tc->plugin, "%s", plugin ? plugin : "?");
    tc->num_devices = num_devices;
    xrt__trace_name_client(tc);
  }
  pthread_mutex_unlock(&xrt__trace_mu);
  xrt__log(XRT_LOG_INFO, "core", "client %d: plugin '%s', %d device(s)", pid,
           plugin ? plugin : "?", num_devices);
}

/* Client release's hook (after the plugin's client_destroy). */
static void xrt__trace_client_closed(const struct xrt__client *c) {
  pthread_mutex_lock(&xrt__trace_mu);
  for (xrt__trace_client **p = &xrt__tr.clients; *p; p = &(*p)->next)
    if ((*p)->c == c) {
      xrt__trace_client *tc = *p;
      *p = tc->next;
      tc->al.free(tc->al.self, tc);
      break;
    }
  pthread_mutex_unlock(&xrt__trace_mu);
}

/* ---- compiles ---- */

/* A compile's start time when it is traced or logged, else 0. */
static int64_t xrt__compile_begin(void) {
  if (!xrt__trace_on() && !xrt_log_enabled(XRT_LOG_DEBUG, "compile"))
    return 0;
  int64_t t = xrt__now_ns();
  return t ? t : 1;
}

/* A compile of module's entry that began at t0_ns succeeded. */
static void xrt__compiled(const struct xrt__client *c, const char *module,
                          const char *entry, int64_t t0_ns) {
  int64_t t1 = xrt__now_ns();
  char name[600];
  snprintf(name, sizeof name, "%.256s%s%.256s", module ? module : "",
           module && *module ? "." : "", entry ? entry : "");
  xrt__trace_complete(c, -1, "compile", name, t0_ns, t1);
  xrt__log(XRT_LOG_DEBUG, "compile", "compiled %s in %.3f ms", name,
           (double)(t1 - t0_ns) / 1e6);
}

/* A cache hit that began at t0_ns: "pmap hit @main" on the host track. */
static void xrt__trace_cache_hit(const struct xrt__client *c,
                                 const char *cache, const char *what,
                                 int64_t t0_ns) {
  int64_t t1 = xrt__now_ns();
  char name[320];
  snprintf(name, sizeof name, "%s hit @%.256s", cache, what ? what : "?");
  xrt__trace_complete(c, -1, "cache", name, t0_ns, t1);
}

/* ======================================================================
 * 3. Memory
 *
 * Which allocator pays for what.  Everything a client's calls allocate on
 * the host comes from the client's xrt_allocator (xrt_client_options
 * .allocator), and the plugin gets the same one (client_args.allocator;
 * the simulator takes its device memory from it too): the client and its
 * devices, queues' tasks, events, buffers, host
 * functions, programs parsed by xrt_compile (arena and parser scratch),
 * executables, launches, sharded arrays, pmaps, variables and reshard
 * plans, staging copies, support reports, .npy data read for a client,
 * and its trace registry entry.  The allocator must outlive everything
 * made from it (a support report may outlive its client).  Objects that
 * have no client use the allocator of their owner: a context its
 * xrt_context_options.allocator (plugin records, paths, directory
 * listings); a program from xrt_program_parse, which has no client, the
 * system allocator (xrt_compile parses with the client's).  What stays on
 * malloc: the handle table's chunks (process-wide, shared by every
 * client, kept until exit), DLPack export records (their deleters may run
 * after the client and its allocator are gone), the text a pmap source
 * callback returns (malloc'd by contract), the OS layer's short-lived
 * path strings, and libc's and the threads' own memory.  Every failure is XRT_RESOURCE_EXHAUSTED naming what was
 * being allocated (xrt__nomem), and leaves nothing allocated behind.
 * ==================================================================== */

static void *xrt__system_alloc(void *self, size_t size) {
  XRT__UNUSED(self);
  return malloc(size ? size : 1);
}
static void xrt__system_free(void *self, void *ptr) {
  XRT__UNUSED(self);
  free(ptr);
}

xrt_allocator xrt_allocator_system(void) {
  xrt_allocator a = {NULL, xrt__system_alloc, xrt__system_free};
  return a;
}

static void *xrt__alloc(const xrt_allocator *a, size_t n) {
  return a->alloc(a->self, n);
}
static void *xrt__calloc(const xrt_allocator *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = a->alloc(a->self, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}
static void xrt__free(const xrt_allocator *a, void *p) {
  if (p) a->free(a->self, p);
}

/* realloc through an allocator (which has no realloc): n bytes holding
 * the first min(old, n) of p, p freed; NULL (p untouched) on failure. */
static void *xrt__realloc(const xrt_allocator *a, void *p, size_t old,
                          size_t n) {
  void *q = a->alloc(a->self, n ? n : 1);
  if (!q) return NULL;
  if (p) memcpy(q, p, old < n ? old : n);
  xrt__free(a, p);
  return q;
}

static char *xrt__strdup_with(const xrt_allocator *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = (char *)a->alloc(a->self, n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Host allocation failures seen by this thread (lets a caller tell them
 * from a plugin's device memory running out). */
static XRT__THREAD_LOCAL unsigned xrt__nomem_seen;

/* The failure of an allocation: what was being allocated, and for what. */
static xrt_status xrt__nomem(const char *what) {
  xrt__nomem_seen++;
  return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of host memory for %s", what);
}

/* An arena: many small allocations freed at once (parsed programs). */
typedef struct xrt__arena_chunk {
  struct xrt__arena_chunk *next;
  size_t used, cap;
  max_align_t align_[]; /* data follows */
} xrt__arena_chunk;

typedef struct xrt__arena {
  xrt_allocator allocator;
  xrt__arena_chunk *head;
  size_t total;
} xrt__arena;

static void xrt__arena_init(xrt__arena *a, xrt_allocator allocator) {
  a->allocator = allocator;
  a->head = NULL;
  a->total = 0;
}

static void xrt__arena_release(xrt__arena *a) {
  xrt__arena_chunk *c = a->head;
  while (c) {
    xrt__arena_chunk *next = c->next;
    xrt__free(&a->allocator, c);
    c = next;
  }
  a->head = NULL;
  a->total = 0;
}

/* Zeroed, 16-byte aligned memory from the arena; NULL when out of memory. */
static void *xrt__arena_alloc(xrt__arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  xrt__arena_chunk *c = a->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = a->total < 65536 ? 16384 : a->total / 2;
    if (cap < n) cap = n;
    if (cap > SIZE_MAX - sizeof(xrt__arena_chunk) - 16) return NULL;
    c = (xrt__arena_chunk *)xrt__alloc(&a->allocator,
                                       sizeof(xrt__arena_chunk) + cap + 16);
    if (!c) return NULL;
    c->next = a->head;
    c->cap = cap;
    c->used = 0;
    a->head = c;
    a->total += cap;
  }
  uintptr_t base = (uintptr_t)(c + 1);
  uintptr_t p = (base + c->used + 15) & ~(uintptr_t)15;
  c->used = (size_t)(p - base) + n;
  memset((void *)p, 0, n);
  return (void *)p;
}

static char *xrt__arena_strndup(xrt__arena *a, const char *s, size_t n) {
  char *p = (char *)xrt__arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

/* ======================================================================
 * 4. Types
 * ==================================================================== */

typedef struct xrt__dtype_info {
  const char *name;
  uint8_t size;  /* storage bytes */
  uint8_t bits;  /* value bits */
  uint8_t klass; /* XRT__K_* */
} xrt__dtype_info;

enum { XRT__K_NONE, XRT__K_PRED, XRT__K_SINT, XRT__K_UINT, XRT__K_FLOAT,
       XRT__K_COMPLEX };

static const xrt__dtype_info xrt__dtypes[XRT_DTYPE_COUNT] = {
    [XRT_DTYPE_INVALID] = {"invalid", 0, 0, XRT__K_NONE},
    [XRT_PRED] = {"i1", 1, 1, XRT__K_PRED},
    [XRT_S8] = {"i8", 1, 8, XRT__K_SINT},
    [XRT_S16] = {"i16", 2, 16, XRT__K_SINT},
    [XRT_S32] = {"i32", 4, 32, XRT__K_SINT},
    [XRT_S64] = {"i64", 8, 64, XRT__K_SINT},
    [XRT_U8] = {"ui8", 1, 8, XRT__K_UINT},
    [XRT_U16] = {"ui16", 2, 16, XRT__K_UINT},
    [XRT_U32] = {"ui32", 4, 32, XRT__K_UINT},
    [XRT_U64] = {"ui64", 8, 64, XRT__K_UINT},
    [XRT_F16] = {"f16", 2, 16, XRT__K_FLOAT},
    [XRT_BF16] = {"bf16", 2, 16, XRT__K_FLOAT},
    [XRT_F32] = {"f32", 4, 32, XRT__K_FLOAT},
    [XRT_F64] = {"f64", 8, 64, XRT__K_FLOAT},
    [XRT_C64] = {"complex<f32>", 8, 64, XRT__K_COMPLEX},
    [XRT_C128] = {"complex<f64>", 16, 128, XRT__K_COMPLEX},
    [XRT_S2] = {"i2", 1, 2, XRT__K_SINT},
    [XRT_S4] = {"i4", 1, 4, XRT__K_SINT},
    [XRT_U2] = {"ui2", 1, 2, XRT__K_UINT},
    [XRT_U4] = {"ui4", 1, 4, XRT__K_UINT},
    [XRT_F8E4M3FN] = {"f8E4M3FN", 1, 8, XRT__K_FLOAT},
    [XRT_F8E5M2] = {"f8E5M2", 1, 8, XRT__K_FLOAT},
    [XRT_F8E4M3FNUZ] = {"f8E4M3FNUZ", 1, 8, XRT__K_FLOAT},
    [XRT_F8E5M2FNUZ] = {"f8E5M2FNUZ", 1, 8, XRT__K_FLOAT},
    [XRT_F8E4M3B11FNUZ] = {"f8E4M3B11FNUZ", 1, 8, XRT__K_FLOAT},
    [XRT_F8E3M4] = {"f8E3M4", 1, 8, XRT__K_FLOAT},
    [XRT_F8E4M3] = {"f8E4M3", 1, 8, XRT__K_FLOAT},
    [XRT_F8E8M0FNU] = {"f8E8M0FNU", 1, 8, XRT__K_FLOAT},
    [XRT_F6E2M3FN] = {"f6E2M3FN", 1, 6, XRT__K_FLOAT},
    [XRT_F6E3M2FN] = {"f6E3M2FN", 1, 6, XRT__K_FLOAT},
    [XRT_F4E2M1FN] = {"f4E2M1FN", 1, 4, XRT__K_FLOAT},
};

static bool xrt__dtype_valid(xrt_dtype t) {
  return (int)t > 0 && (int)t < XRT_DTYPE_COUNT;
}
static int xrt__dtype_class(xrt_dtype t) {
  return xrt__dtype_valid(t) ? xrt__dtypes[t].klass : XRT__K_NONE;
}

size_t xrt_dtype_size(xrt_dtype t) {
  return xrt__dtype_valid(t) ? xrt__dtypes[t].size : 0;
}
const char *xrt_dtype_name(xrt_dtype t) {
  return xrt__dtype_valid(t) ? xrt__dtypes[t].name : "invalid";
}
int xrt_dtype_bits(xrt_dtype t) {
  return xrt__dtype_valid(t) ? xrt__dtypes[t].bits : 0;
}
xrt_dtype xrt_dtype_from_name(const char *name, size_t len) {
  if (!name) return XRT_DTYPE_INVALID;
  for (int t = 1; t < XRT_DTYPE_COUNT; t++) {
    const char *n = xrt__dtypes[t].name;
    if (strlen(n) == len && memcmp(n, name, len) == 0) return (xrt_dtype)t;
  }
  return XRT_DTYPE_INVALID;
}
bool xrt_dtype_is_float(xrt_dtype t) {
  return xrt__dtype_class(t) == XRT__K_FLOAT;
}
bool xrt_dtype_is_complex(xrt_dtype t) {
  return xrt__dtype_class(t) == XRT__K_COMPLEX;
}
bool xrt_dtype_is_signed_int(xrt_dtype t) {
  return xrt__dtype_class(t) == XRT__K_SINT;
}
bool xrt_dtype_is_unsigned_int(xrt_dtype t) {
  return xrt__dtype_class(t) == XRT__K_UINT;
}

int64_t xrt_shape_numel(const xrt_shape *s) {
  if (!s) return 0;
  int64_t n = 1;
  for (int32_t i = 0; i < s->rank && i < XRT_MAX_RANK; i++) n *= s->dims[i];
  return n;
}

size_t xrt_shape_bytes(const xrt_shape *s) {
  return s ? (size_t)xrt_shape_numel(s) * xrt_dtype_size(s->dtype) : 0;
}

size_t xrt_shape_format(const xrt_shape *s, char *buf, size_t cap) {
  char tmp[512];
  size_t n = 0;
  n += (size_t)snprintf(tmp + n, sizeof tmp - n, "tensor<");
  for (int32_t i = 0; s && i < s->rank && i < XRT_MAX_RANK; i++)
    n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%" PRId64 "x", s->dims[i]);
  n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%s>",
                        s ? xrt_dtype_name(s->dtype) : "invalid");
  if (cap) snprintf(buf, cap, "%s", tmp);
  return n;
}

/* Validates a user-supplied shape; the bytes it needs go to *bytes. */
static xrt_status xrt__shape_check(const xrt_shape *s, size_t *bytes) {
  if (!xrt__dtype_valid(s->dtype))
    return xrt__fail(XRT_INVALID_ARGUMENT, "invalid element type %d",
                     (int)s->dtype);
  if (s->rank < 0 || s->rank > XRT_MAX_RANK)
    return xrt__fail(XRT_INVALID_ARGUMENT, "rank %d is outside 0..%d",
                     (int)s->rank, XRT_MAX_RANK);
  /* The bound applies to the product of the nonzero dimensions too: an
   * empty array's strides are still products of its dimensions. */
  uint64_t n = xrt_dtype_size(s->dtype);
  bool empty = false;
  for (int32_t i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "dimension %d is negative (%" PRId64
                       ")", (int)i, s->dims[i]);
    if (s->dims[i] == 0) { empty = true; continue; }
    if (n > (uint64_t)SIZE_MAX / 2 / (uint64_t)s->dims[i])
      return xrt__fail(XRT_INVALID_ARGUMENT, "shape is too large: its byte "
                       "size does not fit in size_t");
    n *= (uint64_t)s->dims[i];
  }
  *bytes = empty ? 0 : (size_t)n;
  return XRT_OK;
}

static bool xrt__shape_equal(const xrt_shape *a, const xrt_shape *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

static const char *const xrt__opcode_names[XRT_OP_COUNT] = {
    [XRT_OP_INVALID] = "invalid",
#define XRT__OPCODE_NAME(e, s) [XRT_OP_##e] = s,
    XRT_OPCODES(XRT__OPCODE_NAME)
#undef XRT__OPCODE_NAME
};

const char *xrt_opcode_name(xrt_opcode op) {
  return ((int)op > 0 && (int)op < XRT_OP_COUNT) ? xrt__opcode_names[op]
                                                 : "invalid";
}

/* Opcode lookup by name: a small open-addressing hash table built once. */
#define XRT__OPHASH_SIZE 512
static uint16_t xrt__ophash[XRT__OPHASH_SIZE];
static pthread_once_t xrt__ophash_once = PTHREAD_ONCE_INIT;

static uint32_t xrt__hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

static void xrt__ophash_build(void) {
  for (int op = 1; op < XRT_OP_COUNT; op++) {
    const char *s = xrt__opcode_names[op];
    uint32_t h = xrt__hash_bytes(s, strlen(s)) & (XRT__OPHASH_SIZE - 1);
    while (xrt__ophash[h]) h = (h + 1) & (XRT__OPHASH_SIZE - 1);
    xrt__ophash[h] = (uint16_t)op;
  }
}

static xrt_opcode xrt__opcode_from_name(const char *s, size_t n) {
  pthread_once(&xrt__ophash_once, xrt__ophash_build);
  uint32_t h = xrt__hash_bytes(s, n) & (XRT__OPHASH_SIZE - 1);
  while (xrt__ophash[h]) {
    const char *name = xrt__opcode_names[xrt__ophash[h]];
    if (strlen(name) == n && memcmp(name, s, n) == 0)
      return (xrt_opcode)xrt__ophash[h];
    h = (h + 1) & (XRT__OPHASH_SIZE - 1);
  }
  return XRT_OP_INVALID;
}

/* ======================================================================
 * 5. Parse
 * ==================================================================== */

/* ----------------------------------------------------------------------
 * The parser: StableHLO MLIR text to an xrt_ir_module.
 *
 * Approach: a hand-written recursive-descent parser that works directly on
 * the characters (there is no token stream). Every failure is reported at
 * the offending character through xrt__perr, which records the message
 * with xrt__fail and longjmps back to xrt__parse_module; that keeps the
 * grammar code free of error plumbing. Anything that must survive the jump
 * lives in the parser struct: growable scratch stacks (malloc'd, freed
 * once at the end) used strictly LIFO, so a nested region or attribute can
 * push on the same stack as the op that encloses it and pop back to its
 * mark. Finished arrays are copied into the arena. Names of values live in
 * a chained hash table whose entries form a stack, so leaving a region
 * just pops the names it defined (the newest entry of a chain is always
 * its head). Nesting of regions, types and brackets is bounded by
 * XRT__PARSE_MAX_DEPTH. Line/column numbers are computed lazily from
 * pointers with a forward-only cache, so the hot path never counts
 * newlines twice.
 *
 * As in MLIR, an op's location is its name, and the types an op's syntax
 * states for its operands are checked against the values' own types when
 * they are read, so a mismatch is reported at the use (%name); each
 * operand's position rides along on a stack parallel to its value id.
 * Value types are interned (a program has few distinct types) and expanded
 * into xrt_ir_func.value_types once per function. Both the pretty and the
 * generic (--mlir-print-op-generic) forms of ops, functions and modules
 * are accepted.
 * -------------------------------------------------------------------- */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XRT__PARSE_MAX_DEPTH 256

#if defined(__GNUC__)
#define XRT__PARSE_PRINTF(a, b) XRT_PRINTF_FORMAT(a, b)
#else
#define XRT__PARSE_PRINTF(a, b)
#endif

/* ---------------------------------------------------------------------
 * Scratch stacks and the parser state
 * ------------------------------------------------------------------- */

typedef struct xrt__pvec {
  char *data;
  size_t n, cap, elem;
} xrt__pvec;

typedef struct xrt__tok {
  const char *s;
  size_t n;
} xrt__tok;

typedef struct xrt__sym {
  const char *s;
  uint32_t n, hash;
  int32_t id, count, next;
} xrt__sym;

typedef struct xrt__symtab {
  xrt__pvec syms; /* xrt__sym, newest last */
  int32_t *buckets;
  uint32_t mask;
} xrt__symtab;

typedef struct xrt__name { /* a result or block-argument name */
  const char *s;
  uint32_t n;
  int32_t count;
} xrt__name;

typedef struct xrt__parser {
  xrt__arena *arena;
  const char *beg, *p, *end;
  const char *file;
  int line_offset;
  const char *lc_pos, *lc_line_start; /* line/col cache */
  int lc_line;
  int depth;
  bool in_attr;      /* `index` is a type only inside attributes */
  xrt__tok dt_last;  /* the last element type name looked up, */
  xrt_dtype dt_last_type; /* and its dtype */
  jmp_buf jb;
  xrt_status status; /* code of the failure that longjmp'd */
  xrt__symtab vals;  /* value names of the current function */
  xrt__symtab funcs; /* function names */
  xrt__pvec vtypes;  /* int32_t per value id of the current function: its
                        type's index in utypes */
  xrt__pvec utypes;  /* xrt_ir_type: the distinct value types seen, */
  int32_t *utab;     /* hashed into these utypes indices (-1: empty) */
  uint32_t umask;
  xrt__pvec ints;    /* int32_t: operands, block args */
  xrt__pvec uses;    /* const char *, one per ints entry: where it was
                        written (%name), NULL if synthesized */
  xrt__pvec i64s;    /* int64_t scratch */
  xrt__pvec f64s;    /* double scratch */
  xrt__pvec tys;     /* xrt_ir_type scratch: result types, tuple elements */
  xrt__pvec attrs;   /* xrt_ir_attr */
  xrt__pvec ops;     /* xrt_ir_op */
  xrt__pvec regions; /* xrt_ir_region */
  xrt__pvec names;   /* xrt__name */
  xrt__pvec fns;     /* xrt_ir_func */
} xrt__parser;

static _Noreturn void xrt__perr(xrt__parser *p, const char *at, xrt_status code,
                                const char *fmt, ...) XRT__PARSE_PRINTF(4, 5);

static void xrt__loc_of(xrt__parser *p, const char *at, int *line, int *col) {
  if (at > p->end) at = p->end;
  if (at < p->lc_pos) { /* backwards: restart from the top (errors only) */
    p->lc_pos = p->lc_line_start = p->beg;
    p->lc_line = 1;
  }
  const char *s = p->lc_pos;
  for (;;) {
    const char *nl = memchr(s, '\n', (size_t)(at - s));
    if (!nl) break;
    p->lc_line++;
    p->lc_line_start = s = nl + 1;
  }
  p->lc_pos = at;
  *line = p->lc_line + p->line_offset;
  *col = (int)(at - p->lc_line_start) + 1;
}

static _Noreturn void xrt__perr_v(xrt__parser *p, int line, int col,
                                  xrt_status code, const char *fmt,
                                  va_list ap) {
  char msg[512];
  p->status = code;
  vsnprintf(msg, sizeof msg, fmt, ap);
  xrt__fail(code, "%s:%d:%d: %s", p->file, line, col, msg);
  longjmp(p->jb, (int)code);
}

static void xrt__perr(xrt__parser *p, const char *at, xrt_status code,
                      const char *fmt, ...) {
  int line, col;
  va_list ap;
  xrt__loc_of(p, at, &line, &col);
  va_start(ap, fmt);
  xrt__perr_v(p, line, col, code, fmt, ap);
}

static _Noreturn void xrt__perr_loc(xrt__parser *p, xrt_ir_loc loc,
                                    xrt_status code, const char *fmt, ...)
    XRT__PARSE_PRINTF(4, 5);
static void xrt__perr_loc(xrt__parser *p, xrt_ir_loc loc, xrt_status code,
                          const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  xrt__perr_v(p, loc.line, loc.col, code, fmt, ap);
}

static _Noreturn void xrt__oom(xrt__parser *p) {
  xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: out of host memory while parsing",
            p->file);
  p->status = XRT_RESOURCE_EXHAUSTED; /* what xrt__parse_module returns */
  longjmp(p->jb, (int)XRT_RESOURCE_EXHAUSTED);
}

static void *xrt__p_alloc(xrt__parser *p, size_t n) {
  void *m = xrt__arena_alloc(p->arena, n ? n : 1);
  if (!m) xrt__oom(p);
  return m;
}

static const char *xrt__strdup(xrt__parser *p, const char *s, size_t n) {
  char *m = xrt__arena_strndup(p->arena, s, n);
  if (!m) xrt__oom(p);
  return m;
}

/* Appends one entry (uninitialized: callers assign the whole entry). */
static void *xrt__push_raw(xrt__parser *p, xrt__pvec *v) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 64;
    char *d = xrt__realloc(&p->arena->allocator, v->data, v->n * v->elem,
                           cap * v->elem);
    if (!d) xrt__oom(p);
    v->data = d;
    v->cap = cap;
  }
  return v->data + v->n++ * v->elem;
}

static void *xrt__push(xrt__parser *p, xrt__pvec *v) {
  return memset(xrt__push_raw(p, v), 0, v->elem);
}

#define XRT__VAT(v, T, i) (((T *)(v).data)[i])

/* Copies entries [mark, n) of v into the arena (NULL when empty). */
static void *xrt__vcopy(xrt__parser *p, const xrt__pvec *v, size_t mark) {
  size_t bytes = (v->n - mark) * v->elem;
  if (!bytes) return NULL;
  void *m = xrt__p_alloc(p, bytes);
  memcpy(m, v->data + mark * v->elem, bytes);
  return m;
}

/* ---------------------------------------------------------------------
 * Symbol tables
 * ------------------------------------------------------------------- */

static uint32_t xrt__hash(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static void xrt__sym_rehash(xrt__parser *p, xrt__symtab *t, uint32_t nb) {
  /* Refilled below: nothing to copy. */
  int32_t *b = xrt__realloc(&p->arena->allocator, t->buckets, 0,
                            nb * sizeof *b);
  if (!b) xrt__oom(p);
  t->buckets = b;
  t->mask = nb - 1;
  memset(b, 0xff, nb * sizeof *b); /* -1 */
  for (size_t i = 0; i < t->syms.n; i++) { /* oldest first keeps LIFO */
    xrt__sym *s = &XRT__VAT(t->syms, xrt__sym, i);
    s->next = b[s->hash & t->mask];
    b[s->hash & t->mask] = (int32_t)i;
  }
}

static xrt__sym *xrt__sym_find(xrt__symtab *t, const char *s, size_t n) {
  if (!t->buckets) return NULL;
  uint32_t h = xrt__hash(s, n);
  for (int32_t i = t->buckets[h & t->mask]; i >= 0;) {
    xrt__sym *e = &XRT__VAT(t->syms, xrt__sym, i);
    if (e->hash == h && e->n == n && !memcmp(e->s, s, n)) return e;
    i = e->next;
  }
  return NULL;
}

static void xrt__sym_add(xrt__parser *p, xrt__symtab *t, const char *s,
                         size_t n, int32_t id, int32_t count) {
  if (!t->buckets || t->syms.n >= (size_t)t->mask + 1)
    xrt__sym_rehash(p, t, t->buckets ? (t->mask + 1) * 2 : 1024);
  uint32_t h = xrt__hash(s, n);
  xrt__sym *e = xrt__push(p, &t->syms);
  e->s = s;
  e->n = (uint32_t)n;
  e->hash = h;
  e->id = id;
  e->count = count;
  e->next = t->buckets[h & t->mask];
  t->buckets[h & t->mask] = (int32_t)(t->syms.n - 1);
}

/* Forgets the names defined since mark (leaving a scope). */
static void xrt__sym_pop(xrt__symtab *t, size_t mark) {
  while (t->syms.n > mark) {
    xrt__sym *e = &XRT__VAT(t->syms, xrt__sym, t->syms.n - 1);
    t->buckets[e->hash & t->mask] = e->next;
    t->syms.n--;
  }
}

/* ---------------------------------------------------------------------
 * Characters and tokens
 * ------------------------------------------------------------------- */

static bool xrt__is_digit(int c) { return c >= '0' && c <= '9'; }
static bool xrt__is_alpha(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool xrt__is_idstart(int c) { return xrt__is_alpha(c) || c == '_'; }
/* bare-id characters (op names, attribute names, keywords) */
static bool xrt__is_idchar(int c) {
  return xrt__is_alpha(c) || xrt__is_digit(c) || c == '_' || c == '$' ||
         c == '.';
}
/* suffix-id characters (%value and @symbol names) */
static bool xrt__is_namechar(int c) { return xrt__is_idchar(c) || c == '-'; }
static int xrt__hexval(int c) {
  if (xrt__is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void xrt__ws_slow(xrt__parser *p) {
  const char *s = p->p, *e = p->end;
  while (s < e) {
    char c = *s;
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      s++;
    } else if (c == '/' && s + 1 < e && s[1] == '/') {
      const char *nl = memchr(s, '\n', (size_t)(e - s));
      s = nl ? nl + 1 : e;
    } else {
      break;
    }
  }
  p->p = s;
}

/* Skips whitespace and comments; most calls find a token right away. */
static inline void xrt__ws(xrt__parser *p) {
  if (p->p < p->end && (unsigned char)*p->p > ' ' && *p->p != '/') return;
  xrt__ws_slow(p);
}

static int xrt__peek(xrt__parser *p) {
  xrt__ws(p);
  return p->p < p->end ? (unsigned char)*p->p : -1;
}

static int xrt__peek2(xrt__parser *p) { /* character after the next one */
  xrt__ws(p);
  return p->p + 1 < p->end ? (unsigned char)p->p[1] : -1;
}

static bool xrt__eat(xrt__parser *p, char c) {
  if (xrt__peek(p) != (unsigned char)c) return false;
  p->p++;
  return true;
}

/* "expected X, found 'tok'" at the current position. */
static _Noreturn void xrt__expected(xrt__parser *p, const char *what) {
  xrt__ws(p);
  if (p->p >= p->end) xrt__perr(p, p->p, XRT_INVALID_ARGUMENT,
                                "expected %s, found end of input", what);
  size_t n = 1;
  while (p->p + n < p->end && n < 24 && xrt__is_namechar(p->p[0]) &&
         xrt__is_namechar(p->p[n]))
    n++;
  xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "expected %s, found '%.*s'", what,
            (int)n, p->p);
}

static void xrt__expect(xrt__parser *p, char c) {
  if (!xrt__eat(p, c)) {
    char what[4] = {'\'', c, '\'', 0};
    xrt__expected(p, what);
  }
}

static bool xrt__eat_arrow(xrt__parser *p) {
  if (xrt__peek(p) != '-' || xrt__peek2(p) != '>') return false;
  p->p += 2;
  return true;
}

/* A bare identifier (letters, digits, _ $ .) at the next token; n == 0 if
 * there is none.  Consumes it. */
static xrt__tok xrt__ident(xrt__parser *p) {
  xrt__tok t = {NULL, 0};
  if (!xrt__is_idstart(xrt__peek(p))) return t;
  t.s = p->p;
  while (p->p < p->end && xrt__is_idchar(*p->p)) p->p++;
  t.n = (size_t)(p->p - t.s);
  return t;
}

static bool xrt__tok_is(xrt__tok t, const char *s) {
  size_t n = strlen(s);
  return t.n == n && !memcmp(t.s, s, n);
}

/* Consumes keyword kw if it is the next whole identifier. */
static bool xrt__eat_kw(xrt__parser *p, const char *kw) {
  const char *save = p->p;
  xrt__tok t = xrt__ident(p);
  if (xrt__tok_is(t, kw)) return true;
  p->p = save;
  return false;
}

static void xrt__expect_kw(xrt__parser *p, const char *kw) {
  if (!xrt__eat_kw(p, kw)) {
    char what[64];
    snprintf(what, sizeof what, "'%s'", kw);
    xrt__expected(p, what);
  }
}

static bool xrt__peek_kw(xrt__parser *p, const char *kw) {
  const char *save = p->p;
  bool yes = xrt__eat_kw(p, kw);
  p->p = save;
  return yes;
}

/* A %value or @symbol name after its sigil (sigil already consumed). */
static xrt__tok xrt__suffix_name(xrt__parser *p) {
  xrt__tok t = {p->p, 0};
  while (p->p < p->end && xrt__is_namechar(*p->p)) p->p++;
  t.n = (size_t)(p->p - t.s);
  if (!t.n) xrt__expected(p, "a name");
  return t;
}

/* Finds the end of a string literal starting at p->p ('"'); returns its
 * raw contents and moves past the closing quote. */
static xrt__tok xrt__string_raw(xrt__parser *p) {
  const char *s = p->p + 1;
  while (s < p->end && *s != '"') s += (*s == '\\' && s + 1 < p->end) ? 2 : 1;
  if (s >= p->end)
    xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "unterminated string");
  xrt__tok t = {p->p + 1, (size_t)(s - p->p - 1)};
  p->p = s + 1;
  return t;
}

/* Decodes MLIR string escapes (\" \\ \n \t \XX) into an arena string. */
static const char *xrt__unescape(xrt__parser *p, xrt__tok raw, int64_t *len) {
  char *out = xrt__p_alloc(p, raw.n + 1);
  size_t n = 0;
  for (size_t i = 0; i < raw.n; i++) {
    char c = raw.s[i];
    if (c == '\\' && i + 1 < raw.n) {
      char e = raw.s[++i];
      int h1 = xrt__hexval(e), h2 = i + 1 < raw.n ? xrt__hexval(raw.s[i + 1]) : -1;
      if (e == 'n') c = '\n';
      else if (e == 't') c = '\t';
      else if (h1 >= 0 && h2 >= 0) c = (char)(h1 * 16 + h2), i++;
      else c = e;
    }
    out[n++] = c;
  }
  out[n] = 0;
  if (len) *len = (int64_t)n;
  return out;
}

static const char *xrt__parse_string(xrt__parser *p, int64_t *len) {
  if (xrt__peek(p) != '"') xrt__expected(p, "a string");
  return xrt__unescape(p, xrt__string_raw(p), len);
}

static void xrt__depth_in(xrt__parser *p) {
  if (++p->depth > XRT__PARSE_MAX_DEPTH)
    xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "nesting deeper than %d levels",
              XRT__PARSE_MAX_DEPTH);
}

/* Skips balanced text up to (not including) an unmatched closer, or a
 * top-level ',' when stop_at_comma.  Brackets ([{< nest, strings are opaque,
 * "->" is not a bracket. */
static void xrt__skip_balanced(xrt__parser *p, bool stop_at_comma) {
  char stack[XRT__PARSE_MAX_DEPTH];
  int depth = 0;
  while (p->p < p->end) {
    char c = *p->p, close = c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}'
                                                  : c == '<' ? '>' : 0;
    if (c == '"') {
      xrt__string_raw(p);
    } else if (c == '/' && p->p + 1 < p->end && p->p[1] == '/') {
      xrt__ws(p);
    } else if (c == '-' && p->p + 1 < p->end && p->p[1] == '>') {
      p->p += 2;
    } else if (close) {
      if (depth == XRT__PARSE_MAX_DEPTH)
        xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "nesting too deep");
      stack[depth++] = close;
      p->p++;
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (depth == 0) return;
      if (stack[depth - 1] != c)
        xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "unbalanced '%c'", c);
      depth--;
      p->p++;
    } else if (c == ',' && depth == 0 && stop_at_comma) {
      return;
    } else {
      p->p++;
    }
  }
  if (depth) xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "unexpected end of input");
}

/* Accepts and ignores a location: loc(...). */
static void xrt__skip_loc(xrt__parser *p) {
  if (!xrt__peek_kw(p, "loc")) return;
  xrt__eat_kw(p, "loc");
  xrt__expect(p, '(');
  xrt__skip_balanced(p, false);
  xrt__expect(p, ')');
}

/* ---------------------------------------------------------------------
 * Numbers
 * ------------------------------------------------------------------- */

typedef struct xrt__num {
  const char *at;
  bool neg, hex, is_float; /* is_float: has '.', exponent, inf or nan */
  uint64_t mag;            /* integers */
  double d;                /* floats (and integers, approximately) */
} xrt__num;

/* strtod's result for the unsigned decimal digits[.digits][e[+-]digits] in
 * [s, e) when one IEEE operation gives it exactly (Clinger's fast path:
 * a mantissa below 2^53 and a power of ten below 1e23); false otherwise. */
static bool xrt__fast_decimal(const char *s, const char *e, double *out) {
  static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#if FLT_EVAL_METHOD != 0
  return false; /* excess precision would round twice */
#endif
  uint64_t m = 0;
  int ex = 0;
  bool dot = false;
  for (; s < e && (xrt__is_digit(*s) || (*s == '.' && !dot)); s++) {
    if (*s == '.') {
      dot = true;
      continue;
    }
    if (m > ((uint64_t)1 << 53) / 10) return false;
    m = m * 10 + (uint64_t)(*s - '0');
    ex -= dot;
  }
  if (s < e) { /* e[+-]digits */
    int sign = 1, x = 0;
    s++;
    if (s < e && (*s == '+' || *s == '-')) sign = *s++ == '-' ? -1 : 1;
    for (; s < e; s++) {
      if (x > 1000) return false;
      x = x * 10 + (*s - '0');
    }
    ex += sign * x;
  }
  if (m == 0) {
    *out = 0.0;
    return true;
  }
  if (m > ((uint64_t)1 << 53) || ex < -22 || ex > 22) return false;
  *out = ex < 0 ? (double)m / p10[-ex] : (double)m * p10[ex];
  return true;
}

/* Scans a numeric token: -?(0x[hex]+ | digits[.digits][e[+-]digits] | inf |
 * nan).  Integers go to mag (overflow is an error), others through strtod. */
static xrt__num xrt__scan_num(xrt__parser *p) {
  xrt__num r;
  memset(&r, 0, sizeof r);
  xrt__ws(p);
  r.at = p->p;
  if (p->p < p->end && *p->p == '-') r.neg = true, p->p++;
  const char *s = p->p, *e = p->end;
  if (e - s >= 3 && (!memcmp(s, "inf", 3) || !memcmp(s, "nan", 3)) &&
      (e - s == 3 || !xrt__is_idchar(s[3]))) {
    r.is_float = true;
    r.d = s[0] == 'i' ? INFINITY : NAN;
    if (r.neg) r.d = -r.d;
    p->p += 3;
    return r;
  }
  if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
      xrt__hexval(s[2]) >= 0) {
    r.hex = true;
    for (s += 2; s < e && xrt__hexval(*s) >= 0; s++) {
      if (r.mag >> 60) xrt__perr(p, r.at, XRT_INVALID_ARGUMENT, "integer too large");
      r.mag = r.mag * 16 + (uint64_t)xrt__hexval(*s);
    }
    p->p = s;
    r.d = r.neg ? -(double)r.mag : (double)r.mag;
    return r;
  }
  if (s >= e || !xrt__is_digit(*s)) xrt__expected(p, "a number");
  bool big = false;
  for (; s < e && xrt__is_digit(*s); s++) {
    uint64_t d = (uint64_t)(*s - '0');
    if (r.mag > (UINT64_MAX - d) / 10) big = true;
    r.mag = r.mag * 10 + d;
  }
  if (s < e && *s == '.') {
    r.is_float = true;
    for (s++; s < e && xrt__is_digit(*s); s++) {}
  }
  if (s < e && (*s == 'e' || *s == 'E')) {
    const char *x = s + 1;
    if (x < e && (*x == '+' || *x == '-')) x++;
    if (x < e && xrt__is_digit(*x)) {
      r.is_float = true;
      for (s = x; s < e && xrt__is_digit(*s); s++) {}
    }
  }
  if (big && !r.is_float)
    xrt__perr(p, r.at, XRT_INVALID_ARGUMENT, "integer too large");
  char buf[128];
  size_t n = (size_t)(s - r.at);
  if (n >= sizeof buf) xrt__perr(p, r.at, XRT_INVALID_ARGUMENT, "number too long");
  double d;
  if (xrt__fast_decimal(r.neg ? r.at + 1 : r.at, s, &d)) {
    r.d = r.neg ? -d : d;
  } else {
    memcpy(buf, r.at, n);
    buf[n] = 0;
    r.d = strtod(buf, NULL);
  }
  p->p = s;
  return r;
}

/* An int64 (used for dimensions, axes, attribute integers). */
static int64_t xrt__num_to_i64(xrt__parser *p, const xrt__num *r) {
  if (r->is_float)
    xrt__perr(p, r->at, XRT_INVALID_ARGUMENT, "expected an integer");
  if (r->neg) {
    if (r->mag > (uint64_t)INT64_MAX + 1)
      xrt__perr(p, r->at, XRT_INVALID_ARGUMENT, "integer out of range");
    return (int64_t)(0 - r->mag);
  }
  if (r->mag > (uint64_t)INT64_MAX && !r->hex)
    xrt__perr(p, r->at, XRT_INVALID_ARGUMENT, "integer out of range");
  return (int64_t)r->mag; /* large hex: the bit pattern */
}

static int64_t xrt__parse_i64(xrt__parser *p) {
  xrt__num r = xrt__scan_num(p);
  return xrt__num_to_i64(p, &r);
}

/* ---------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------- */

static void xrt__parse_type(xrt__parser *p, xrt_ir_type *t);

static xrt_dtype xrt__dtype_named(xrt__parser *p, xrt__tok t) {
  if (p->in_attr && xrt__tok_is(t, "index")) return XRT_S64;
  /* xrt_dtype_from_name scans a table; programs repeat one or two types */
  if (t.n == p->dt_last.n && t.n && !memcmp(t.s, p->dt_last.s, t.n))
    return p->dt_last_type;
  xrt_dtype dt = xrt_dtype_from_name(t.s, t.n);
  if (dt != XRT_DTYPE_INVALID) p->dt_last = t, p->dt_last_type = dt;
  return dt;
}

/* Integer range of a storage type (quant defaults). */
static void xrt__int_range(xrt_dtype dt, int64_t *lo, int64_t *hi) {
  int b = xrt_dtype_bits(dt);
  if (dt == XRT_PRED) *lo = 0, *hi = 1;
  else if (xrt_dtype_is_signed_int(dt))
    *lo = b >= 64 ? INT64_MIN : -((int64_t)1 << (b - 1)),
    *hi = b >= 64 ? INT64_MAX : ((int64_t)1 << (b - 1)) - 1;
  else
    *lo = 0, *hi = b >= 63 ? INT64_MAX : ((int64_t)1 << b) - 1;
}

/* quant storage types are spelled i8 / u8 (not ui8). */
static xrt_dtype xrt__quant_storage(xrt__parser *p) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__tok t = xrt__ident(p);
  xrt_dtype dt = xrt_dtype_from_name(t.s, t.n);
  if (t.n >= 2 && t.n < 8 && t.s[0] == 'u' && xrt__is_digit(t.s[1])) {
    char buf[10] = "ui";
    memcpy(buf + 2, t.s + 1, t.n - 1);
    dt = xrt_dtype_from_name(buf, t.n + 1);
  }
  if (!xrt_dtype_is_signed_int(dt) && !xrt_dtype_is_unsigned_int(dt))
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown quantized storage type '%.*s'",
              (int)t.n, t.s);
  return dt;
}

/* One scale[:zero_point] of a !quant.uniform. */
static void xrt__quant_scale(xrt__parser *p) {
  xrt__num r = xrt__scan_num(p);
  *(double *)xrt__push_raw(p, &p->f64s) = r.d;
  int64_t zp = 0;
  if (xrt__eat(p, ':')) zp = xrt__parse_i64(p);
  *(int64_t *)xrt__push_raw(p, &p->i64s) = zp;
}

/* !quant.uniform<i8[<min:max>]:f32[:axis], scale[:zp] | {s:zp, ...}> after
 * the name; returns the storage dtype. */
static xrt_dtype xrt__parse_quant(xrt__parser *p, const xrt_ir_quant **out) {
  xrt_ir_quant *q = xrt__p_alloc(p, sizeof *q);
  xrt__expect(p, '<');
  q->storage = xrt__quant_storage(p);
  xrt__int_range(q->storage, &q->storage_min, &q->storage_max);
  if (xrt__eat(p, '<')) {
    q->storage_min = xrt__parse_i64(p);
    xrt__expect(p, ':');
    q->storage_max = xrt__parse_i64(p);
    xrt__expect(p, '>');
  }
  xrt__expect(p, ':');
  xrt__ws(p);
  const char *at = p->p;
  xrt__tok e = xrt__ident(p);
  q->expressed = xrt_dtype_from_name(e.s, e.n);
  if (!xrt_dtype_is_float(q->expressed))
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown quantized expressed type '%.*s'",
              (int)e.n, e.s);
  q->axis = -1;
  if (xrt__eat(p, ':')) q->axis = (int32_t)xrt__parse_i64(p);
  xrt__expect(p, ',');
  size_t fm = p->f64s.n, im = p->i64s.n;
  if (xrt__eat(p, '{')) {
    do xrt__quant_scale(p);
    while (xrt__eat(p, ','));
    xrt__expect(p, '}');
  } else {
    xrt__quant_scale(p);
  }
  xrt__expect(p, '>');
  q->num_scales = (int32_t)(p->f64s.n - fm);
  q->scales = xrt__vcopy(p, &p->f64s, fm);
  q->zero_points = xrt__vcopy(p, &p->i64s, im);
  p->f64s.n = fm;
  p->i64s.n = im;
  *out = q;
  return q->storage;
}

/* An element type: f32, ui8, complex<f64>, !quant.uniform<...>. */
static xrt_dtype xrt__parse_dtype(xrt__parser *p, const xrt_ir_quant **q) {
  xrt__ws(p);
  const char *at = p->p;
  if (xrt__eat(p, '!')) {
    xrt__tok t = xrt__suffix_name(p);
    if (xrt__tok_is(t, "quant.uniform")) return xrt__parse_quant(p, q);
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown type '!%.*s'", (int)t.n, t.s);
  }
  xrt__tok t = xrt__ident(p);
  if (xrt__tok_is(t, "complex")) {
    xrt__expect(p, '<');
    xrt__ws(p);
    const char *eat = p->p;
    xrt__tok e = xrt__ident(p);
    xrt__expect(p, '>');
    if (xrt__tok_is(e, "f32")) return XRT_C64;
    if (xrt__tok_is(e, "f64")) return XRT_C128;
    xrt__perr(p, eat, XRT_UNIMPLEMENTED, "unknown type 'complex<%.*s>'",
              (int)e.n, e.s);
  }
  if (!t.n) xrt__expected(p, "a type");
  xrt_dtype dt = xrt__dtype_named(p, t);
  if (dt == XRT_DTYPE_INVALID)
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown type '%.*s'", (int)t.n, t.s);
  return dt;
}

/* The 2x3x part of tensor<2x3xf32>, then the element type. */
static void xrt__parse_tensor_body(xrt__parser *p, xrt_ir_type *t) {
  for (;;) {
    int c = xrt__peek(p);
    if (c == '?' || c == '*')
      xrt__perr(p, p->p, XRT_UNIMPLEMENTED, "dynamic shapes are not supported");
    if (!xrt__is_digit(c)) break;
    if (t->shape.rank == XRT_MAX_RANK)
      xrt__perr(p, p->p, XRT_INVALID_ARGUMENT, "rank exceeds %d", XRT_MAX_RANK);
    int64_t d = 0;
    const char *at = p->p;
    for (; p->p < p->end && xrt__is_digit(*p->p); p->p++) {
      if (d > (INT64_MAX - 9) / 10)
        xrt__perr(p, at, XRT_INVALID_ARGUMENT, "dimension too large");
      d = d * 10 + (*p->p - '0');
    }
    t->shape.dims[t->shape.rank++] = d;
    if (p->p >= p->end || *p->p != 'x') xrt__expected(p, "'x'");
    p->p++;
  }
  t->shape.dtype = xrt__parse_dtype(p, &t->quant);
  if (xrt__eat(p, ',')) xrt__skip_balanced(p, false); /* encoding: ignored */
}

static void xrt__parse_tuple_body(xrt__parser *p, xrt_ir_type *t) {
  size_t mark = p->tys.n;
  t->kind = XRT_TYPE_TUPLE;
  if (xrt__peek(p) != '>') {
    do {
      xrt_ir_type e;
      xrt__parse_type(p, &e);
      *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = e;
    } while (xrt__eat(p, ','));
  }
  t->num_elems = (int32_t)(p->tys.n - mark);
  t->elems = xrt__vcopy(p, &p->tys, mark);
  p->tys.n = mark;
}

static void xrt__parse_type(xrt__parser *p, xrt_ir_type *t) {
  memset(t, 0, sizeof *t);
  xrt__ws(p);
  const char *at = p->p;
  xrt__depth_in(p);
  if (xrt__eat_kw(p, "tensor")) {
    xrt__expect(p, '<');
    xrt__parse_tensor_body(p, t);
    xrt__expect(p, '>');
  } else if (xrt__eat_kw(p, "tuple")) {
    xrt__expect(p, '<');
    xrt__parse_tuple_body(p, t);
    xrt__expect(p, '>');
  } else if (xrt__eat(p, '!') && xrt__tok_is(xrt__suffix_name(p), "stablehlo.token")) {
    t->kind = XRT_TYPE_TOKEN;
  } else {
    p->p = at;
    if (!xrt__is_idstart(xrt__peek(p)) && xrt__peek(p) != '!')
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected a type");
    t->shape.dtype = xrt__parse_dtype(p, &t->quant); /* scalar: i32 */
  }
  p->depth--;
}

/* ---------------------------------------------------------------------
 * Dense literals
 * ------------------------------------------------------------------- */

/* (float)d without the undefined behaviour of out-of-range conversions:
 * beyond FLT_MAX + half an ulp it is infinity, else FLT_MAX. */
static float xrt__f64_to_f32(double d) {
  const double max = 3.4028234663852886e38, half_ulp = 10141204801825835211973625643008.0;
  if (!isfinite(d) || fabs(d) <= max) return (float)d;
  float r = fabs(d) >= max + half_ulp ? (float)INFINITY : (float)max;
  return d < 0 ? -r : r;
}

/* Writes d as an element of float type dt. */
static void xrt__store_float(xrt__parser *p, const char *at, xrt_dtype dt,
                             double d, uint8_t *dst) {
  if (dt == XRT_F64) {
    memcpy(dst, &d, 8);
  } else if (dt == XRT_F32) {
    float f = xrt__f64_to_f32(d);
    memcpy(dst, &f, 4);
  } else if (dt == XRT_F16) {
    uint16_t h = xrt_f64_to_f16(d);
    memcpy(dst, &h, 2);
  } else if (dt == XRT_BF16) {
    uint16_t h = xrt_f64_to_bf16(d);
    memcpy(dst, &h, 2);
  } else if (dt >= XRT_F8E4M3FN && dt <= XRT_F4E2M1FN) {
    int32_t b = xrt_minifloat_from_f64(dt, d);
    if (b < 0)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "value out of range for %s",
                xrt_dtype_name(dt));
    *dst = (uint8_t)b;
  } else {
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "float literal of type %s",
              xrt_dtype_name(dt));
  }
}

/* One float element: decimal, inf, nan, or 0x... giving the bit pattern. */
static void xrt__lit_float(xrt__parser *p, xrt_dtype dt, uint8_t *dst) {
  xrt__num r = xrt__scan_num(p);
  if (!r.hex) {
    xrt__store_float(p, r.at, dt, r.d, dst);
    return;
  }
  int bits = xrt_dtype_bits(dt);
  if (r.neg || (bits < 64 && r.mag >> bits))
    xrt__perr(p, r.at, XRT_INVALID_ARGUMENT, "hex value out of range for %s",
              xrt_dtype_name(dt));
  uint64_t m = r.mag;
  memcpy(dst, &m, xrt_dtype_size(dt)); /* little-endian host */
}

/* One integer element with the type's range check. */
static void xrt__lit_int(xrt__parser *p, xrt_dtype dt, uint8_t *dst) {
  xrt__ws(p);
  const char *at = p->p;
  int64_t v;
  if (xrt__eat_kw(p, "true")) v = 1;
  else if (xrt__eat_kw(p, "false")) v = 0;
  else {
    xrt__num r = xrt__scan_num(p);
    if (r.is_float)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected an integer for %s",
                xrt_dtype_name(dt));
    int64_t lo, hi;
    int bits = xrt_dtype_bits(dt);
    xrt__int_range(dt, &lo, &hi);
    bool ok;
    if (r.hex && !r.neg && xrt_dtype_is_signed_int(dt)) { /* bit pattern */
      ok = bits >= 64 || r.mag < ((uint64_t)1 << bits);
      v = (int64_t)r.mag;
      if (ok && bits < 64 && (r.mag >> (bits - 1)) & 1) v -= (int64_t)1 << bits;
    } else if (r.neg) {
      ok = r.mag <= (uint64_t)-(lo + 1) + 1;
      v = (int64_t)(0 - r.mag);
    } else {
      ok = r.mag <= (uint64_t)hi || (bits == 64 && !xrt_dtype_is_signed_int(dt));
      v = (int64_t)r.mag;
    }
    if (!ok)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "value %.*s out of range for %s",
                (int)(p->p - at), at, xrt_dtype_name(dt));
  }
  if (dt == XRT_PRED && (v < 0 || v > 1))
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "value out of range for i1");
  size_t sz = xrt_dtype_size(dt);
  if (sz == 1) *dst = (uint8_t)v;
  else if (sz == 2) { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); }
  else if (sz == 4) { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); }
  else memcpy(dst, &v, 8);
}

typedef struct xrt__litw { /* literal being written */
  const xrt_ir_type *type;
  uint8_t *data;
  size_t esz;
  int64_t n, cap; /* elements seen, elements that fit in data */
  uint8_t sink[16]; /* elements past cap go here: a count error follows */
} xrt__litw;

static uint8_t *xrt__litw_slot(xrt__litw *w) {
  return w->n < w->cap ? w->data + (size_t)w->n * w->esz : w->sink;
}

static void xrt__lit_elem(xrt__parser *p, xrt__litw *w) {
  xrt_dtype dt = w->type->shape.dtype;
  uint8_t *dst = xrt__litw_slot(w);
  if (xrt_dtype_is_complex(dt)) {
    xrt_dtype part = dt == XRT_C64 ? XRT_F32 : XRT_F64;
    size_t half = w->esz / 2;
    if (xrt__eat(p, '(')) {
      xrt__lit_float(p, part, dst);
      xrt__expect(p, ',');
      xrt__lit_float(p, part, dst + half);
      xrt__expect(p, ')');
    } else {
      xrt__lit_float(p, part, dst);
      xrt__store_float(p, p->p, part, 0.0, dst + half);
    }
  } else if (xrt_dtype_is_float(dt)) {
    xrt__lit_float(p, dt, dst);
  } else {
    xrt__lit_int(p, dt, dst);
  }
  w->n++;
}

/* [ ... ] at nesting level `level`; its length must match dims[level]. */
static void xrt__lit_list(xrt__parser *p, xrt__litw *w, int level) {
  const xrt_shape *s = &w->type->shape;
  xrt__ws(p);
  const char *at = p->p;
  if (level >= s->rank)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "dense literal nested deeper than the rank (%d) of its type",
              (int)s->rank);
  xrt__expect(p, '[');
  int64_t count = 0;
  if (!xrt__eat(p, ']')) {
    do {
      if (level + 1 < s->rank) xrt__lit_list(p, w, level + 1);
      else xrt__lit_elem(p, w);
      count++;
    } while (xrt__eat(p, ','));
    xrt__expect(p, ']');
  }
  if (count != s->dims[level])
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "dense literal has %lld elements in dimension %d but its type "
              "has %lld",
              (long long)count, level, (long long)s->dims[level]);
}

static int64_t xrt__numel_sat(const xrt_shape *s) { /* saturating */
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] == 0) return 0;
    n = n > INT64_MAX / s->dims[i] ? INT64_MAX : n * s->dims[i];
  }
  return n;
}

/* "0x..." raw element bytes; one element's worth is a splat. */
static void xrt__lit_hex(xrt__parser *p, xrt_ir_literal *lit, int64_t numel,
                         size_t esz) {
  const char *at = p->p;
  xrt__tok raw = xrt__string_raw(p);
  if (raw.n < 2 || raw.s[0] != '0' || (raw.s[1] != 'x' && raw.s[1] != 'X') ||
      raw.n % 2)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected a hex string \"0x...\"");
  size_t bytes = (raw.n - 2) / 2;
  bool splat = bytes == esz && numel != 1;
  if (!splat && (numel == INT64_MAX || bytes != (size_t)numel * esz))
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "hex literal has %zu bytes, its type needs %lld", bytes,
              (long long)(numel == INT64_MAX ? -1 : numel * (int64_t)esz));
  uint8_t *d = xrt__p_alloc(p, bytes);
  for (size_t i = 0; i < bytes; i++) {
    int h = xrt__hexval(raw.s[2 + 2 * i]), l = xrt__hexval(raw.s[3 + 2 * i]);
    if (h < 0 || l < 0)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "bad hex digit in literal");
    d[i] = (uint8_t)(h * 16 + l);
  }
  lit->data = d;
  lit->bytes = bytes;
  lit->splat = splat;
}

/* Parses the text between dense< and > (already delimited: p->end is set
 * to the closing '>') for a literal of type t. */
static void xrt__lit_body(xrt__parser *p, const xrt_ir_type *t,
                          xrt_ir_literal *lit) {
  size_t esz = xrt_dtype_size(t->shape.dtype);
  int64_t numel = xrt__numel_sat(&t->shape);
  lit->type = *t;
  int c = xrt__peek(p);
  if (c < 0) { /* dense<> */
    if (numel != 0)
      xrt__perr(p, p->p, XRT_INVALID_ARGUMENT,
                "empty dense literal for a type with %lld elements",
                (long long)numel);
    return;
  }
  if (c == '"') {
    xrt__lit_hex(p, lit, numel, esz);
    return;
  }
  int64_t text = (int64_t)(p->end - p->p) + 1; /* >= elements possible */
  xrt__litw w = {t, NULL, esz, 0, numel < text ? numel : text, {0}};
  if (c != '[') w.cap = 1;
  w.data = xrt__p_alloc(p, (size_t)w.cap * esz);
  if (c == '[') {
    xrt__lit_list(p, &w, 0);
  } else {
    xrt__lit_elem(p, &w);
    lit->splat = true;
  }
  lit->data = w.data;
  lit->bytes = (size_t)(w.n < w.cap ? w.n : w.cap) * esz;
}

/* Moves to the '>' that closes a dense<...> body.  Bodies are usually
 * plain number lists: then it is the first '>', found with memchr. */
static void xrt__skip_dense_body(xrt__parser *p) {
  const char *s = p->p, *gt = memchr(s, '>', (size_t)(p->end - s));
  size_t n = gt ? (size_t)(gt - s) : 0;
  if (gt && gt > s && gt[-1] != '-' && !memchr(s, '<', n) &&
      !memchr(s, '"', n) && !memchr(s, '/', n)) {
    p->p = gt;
    return;
  }
  xrt__skip_balanced(p, false);
}

/* dense<...> : type.  The body is scanned first, then parsed once the type
 * is known. */
static void xrt__parse_dense(xrt__parser *p, xrt_ir_literal *lit) {
  xrt__expect_kw(p, "dense");
  xrt__expect(p, '<');
  const char *body = p->p;
  xrt__skip_dense_body(p);
  const char *body_end = p->p;
  xrt__expect(p, '>');
  xrt__expect(p, ':');
  xrt_ir_type t;
  xrt__ws(p);
  const char *tat = p->p;
  xrt__parse_type(p, &t);
  if (t.kind != XRT_TYPE_TENSOR)
    xrt__perr(p, tat, XRT_INVALID_ARGUMENT, "dense literal needs a tensor type");
  const char *save = p->p, *save_end = p->end;
  p->p = body;
  p->end = body_end;
  memset(lit, 0, sizeof *lit);
  xrt__lit_body(p, &t, lit);
  if (xrt__peek(p) >= 0) xrt__expected(p, "'>'");
  p->p = save;
  p->end = save_end;
}

/* ---------------------------------------------------------------------
 * Attributes
 * ------------------------------------------------------------------- */

static void xrt__parse_attr(xrt__parser *p, xrt_ir_attr *a, bool suffix);
static int32_t xrt__parse_dict_entries(xrt__parser *p, char close);

static int xrt__elem_is_int(xrt_dtype dt) {
  return xrt_dtype_is_signed_int(dt) || xrt_dtype_is_unsigned_int(dt);
}

/* Reads element i of an integer literal as int64. */
static int64_t xrt__lit_get_int(const xrt_ir_literal *l, int64_t i) {
  xrt_dtype dt = l->type.shape.dtype;
  size_t sz = xrt_dtype_size(dt);
  const uint8_t *s = (const uint8_t *)l->data + (l->splat ? 0 : (size_t)i * sz);
  bool sg = xrt_dtype_is_signed_int(dt);
  switch (sz) {
  case 1: return sg ? (int64_t)(int8_t)s[0] : (int64_t)s[0];
  case 2: { uint16_t x; memcpy(&x, s, 2); return sg ? (int16_t)x : (int64_t)x; }
  case 4: { uint32_t x; memcpy(&x, s, 4); return sg ? (int32_t)x : (int64_t)x; }
  default: { int64_t x; memcpy(&x, s, 8); return x; }
  }
}

/* dense<...> : T in an attribute: integers and i1 become INTS (keeping the
 * literal in lit, for ops whose attribute is a tensor value), others DENSE. */
static void xrt__attr_dense(xrt__parser *p, xrt_ir_attr *a) {
  xrt_ir_literal *lit = xrt__p_alloc(p, sizeof *lit);
  xrt__parse_dense(p, lit);
  int64_t n = xrt__numel_sat(&lit->type.shape);
  xrt_dtype dt = lit->type.shape.dtype;
  a->lit = lit; /* kept: a constant's 'value' turns back into DENSE */
  if ((xrt__elem_is_int(dt) || dt == XRT_PRED) && !lit->type.quant &&
      n <= (1 << 20)) {
    int64_t *v = xrt__p_alloc(p, (size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = xrt__lit_get_int(lit, i);
    a->kind = XRT_ATTR_INTS;
    a->ints = v;
    a->n = n;
  } else {
    a->kind = XRT_ATTR_DENSE;
  }
}

/* Turns the attrs pushed since mark into a LIST, or INTS when all are
 * integers; pops them. */
static void xrt__attr_collect_list(xrt__parser *p, xrt_ir_attr *a, size_t mark) {
  size_t n = p->attrs.n - mark;
  bool ints = true;
  for (size_t i = mark; i < p->attrs.n; i++)
    ints = ints && XRT__VAT(p->attrs, xrt_ir_attr, i).kind == XRT_ATTR_INT;
  if (ints) {
    int64_t *v = xrt__p_alloc(p, n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = XRT__VAT(p->attrs, xrt_ir_attr, mark + i).i;
    a->kind = XRT_ATTR_INTS;
    a->ints = v;
    a->n = (int64_t)n;
  } else {
    a->kind = XRT_ATTR_LIST;
    a->items = xrt__vcopy(p, &p->attrs, mark);
    a->num_items = (int32_t)n;
  }
  p->attrs.n = mark;
}

/* [a, b, ...] */
static void xrt__attr_list(xrt__parser *p, xrt_ir_attr *a, bool suffix) {
  size_t mark = p->attrs.n;
  xrt__expect(p, '[');
  if (!xrt__eat(p, ']')) {
    do {
      xrt_ir_attr e;
      xrt__parse_attr(p, &e, suffix);
      *(xrt_ir_attr *)xrt__push_raw(p, &p->attrs) = e;
    } while (xrt__eat(p, ','));
    xrt__expect(p, ']');
  }
  xrt__attr_collect_list(p, a, mark);
}

/* array<i64: 1, 2> / array<i64> */
static void xrt__attr_array(xrt__parser *p, xrt_ir_attr *a) {
  size_t mark = p->attrs.n;
  xrt__expect(p, '<');
  xrt_ir_type t;
  xrt__parse_type(p, &t);
  if (xrt__eat(p, ':')) {
    do {
      xrt_ir_attr e;
      xrt__parse_attr(p, &e, false);
      if (e.kind == XRT_ATTR_BOOL) e.kind = XRT_ATTR_INT;
      *(xrt_ir_attr *)xrt__push_raw(p, &p->attrs) = e;
    } while (xrt__eat(p, ','));
  }
  xrt__expect(p, '>');
  xrt__attr_collect_list(p, a, mark);
}

/* {k = v, ...} or <k = v, ...> as a DICT (close is '}' or '>'). */
static void xrt__attr_dict(xrt__parser *p, xrt_ir_attr *a, char close) {
  size_t mark = p->attrs.n;
  a->kind = XRT_ATTR_DICT;
  a->num_items = xrt__parse_dict_entries(p, close);
  a->items = xrt__vcopy(p, &p->attrs, mark);
  p->attrs.n = mark;
}

/* Raw text up to the matching closer, as a STRING (unknown shapes). */
static void xrt__attr_raw(xrt__parser *p, xrt_ir_attr *a, char close) {
  xrt__ws(p);
  const char *s = p->p;
  xrt__skip_balanced(p, false);
  const char *e = p->p;
  xrt__expect(p, close);
  a->kind = XRT_ATTR_STRING;
  a->s = xrt__strdup(p, s, (size_t)(e - s));
  a->n = e - s;
}

/* #stablehlo<kind VALUE> -> ENUM; #d.name<k = v> -> DICT; other -> STRING. */
static void xrt__attr_hash(xrt__parser *p, xrt_ir_attr *a) {
  const char *at = p->p;
  p->p++; /* '#' */
  xrt__tok d = xrt__suffix_name(p);
  if (p->p >= p->end || *p->p != '<') { /* alias reference */
    a->kind = XRT_ATTR_STRING;
    a->s = xrt__strdup(p, at, (size_t)(p->p - at));
    a->n = p->p - at;
    return;
  }
  p->p++;
  const char *inner = p->p;
  if (!memchr(d.s, '.', d.n)) {
    xrt__tok kind = xrt__ident(p), val = xrt__ident(p);
    if (kind.n && val.n && xrt__eat(p, '>')) {
      a->kind = XRT_ATTR_ENUM;
      a->s = xrt__strdup(p, val.s, val.n);
      a->n = (int64_t)val.n;
      return;
    }
    p->p = inner;
    xrt__attr_raw(p, a, '>');
    return;
  }
  xrt__ident(p);
  bool fields = xrt__peek(p) == '=' || xrt__peek(p) == '>';
  p->p = inner;
  if (fields) xrt__attr_dict(p, a, '>');
  else xrt__attr_raw(p, a, '>');
}

/* A number with an optional `: type` (when suffix). */
static void xrt__p_attr_number(xrt__parser *p, xrt_ir_attr *a, bool suffix) {
  xrt__num r = xrt__scan_num(p);
  if (r.is_float) {
    a->kind = XRT_ATTR_FLOAT;
    a->f = r.d;
  } else {
    a->kind = XRT_ATTR_INT;
    a->i = xrt__num_to_i64(p, &r);
    a->f = r.d;
  }
  if (!suffix || xrt__peek(p) != ':') return;
  p->p++;
  xrt_ir_type t;
  xrt__parse_type(p, &t);
  xrt_dtype dt = t.shape.dtype;
  if (t.kind != XRT_TYPE_TENSOR || !xrt_dtype_is_float(dt) || a->kind != XRT_ATTR_INT)
    return;
  a->kind = XRT_ATTR_FLOAT;
  if (r.hex && dt == XRT_F32) a->f = xrt__bits_to_f32((uint32_t)r.mag);
  else if (r.hex && dt == XRT_F64) memcpy(&a->f, &r.mag, 8);
  else if (r.hex && dt == XRT_F16) a->f = xrt_f16_to_f32((uint16_t)r.mag);
  else if (r.hex && dt == XRT_BF16) a->f = xrt_bf16_to_f32((uint16_t)r.mag);
}

static bool xrt__is_type_word(xrt__parser *p, xrt__tok t) {
  return xrt__tok_is(t, "tensor") || xrt__tok_is(t, "tuple") ||
         xrt__tok_is(t, "complex") || xrt__dtype_named(p, t) != XRT_DTYPE_INVALID;
}

/* An identifier-led attribute: true/false/unit/dense/array/types/keywords. */
static void xrt__attr_word(xrt__parser *p, xrt_ir_attr *a, bool suffix) {
  const char *at = p->p;
  xrt__tok t = xrt__ident(p);
  if (xrt__tok_is(t, "true") || xrt__tok_is(t, "false")) {
    a->kind = XRT_ATTR_BOOL;
    a->i = t.s[0] == 't';
    if (suffix && xrt__peek(p) == ':') { /* true : i1 */
      xrt_ir_type ty;
      p->p++;
      xrt__parse_type(p, &ty);
    }
  } else if (xrt__tok_is(t, "unit")) {
    a->kind = XRT_ATTR_UNIT;
  } else if (xrt__tok_is(t, "dense")) {
    p->p = at;
    xrt__attr_dense(p, a);
  } else if (xrt__tok_is(t, "array")) {
    xrt__attr_array(p, a);
  } else if (xrt__is_type_word(p, t)) {
    xrt_ir_type *ty = xrt__p_alloc(p, sizeof *ty);
    p->p = at;
    xrt__parse_type(p, ty);
    a->kind = XRT_ATTR_TYPE;
    a->type = ty;
  } else if (p->p < p->end && *p->p == '<') { /* affine_map<...> etc. */
    p->p++;
    xrt__attr_raw(p, a, '>');
  } else {
    a->kind = XRT_ATTR_ENUM;
    a->s = xrt__strdup(p, t.s, t.n);
    a->n = (int64_t)t.n;
  }
}

/* Any attribute value.  suffix: a trailing `: type` belongs to the value
 * (true in dictionaries; false in pretty op syntax where ':' starts the op's
 * types). */
static void xrt__parse_attr(xrt__parser *p, xrt_ir_attr *a, bool suffix) {
  memset(a, 0, sizeof *a);
  int c = xrt__peek(p);
  const char *at = p->p;
  bool was_in_attr = p->in_attr;
  xrt__depth_in(p);
  p->in_attr = true;
  if (c == '"') {
    a->kind = XRT_ATTR_STRING;
    a->s = xrt__parse_string(p, &a->n);
  } else if (c == '@') {
    p->p++;
    a->kind = XRT_ATTR_SYMBOL;
    if (xrt__peek(p) == '"') {
      a->s = xrt__parse_string(p, &a->n);
    } else {
      xrt__tok t = xrt__suffix_name(p);
      a->s = xrt__strdup(p, t.s, t.n);
      a->n = (int64_t)t.n;
    }
  } else if (c == '[') {
    xrt__attr_list(p, a, suffix);
  } else if (c == '{') {
    p->p++;
    xrt__attr_dict(p, a, '}');
  } else if (c == '<') {
    p->p++;
    xrt__attr_dict(p, a, '>');
  } else if (c == '#') {
    xrt__attr_hash(p, a);
  } else if (c == '-' || xrt__is_digit(c)) {
    xrt__p_attr_number(p, a, suffix);
  } else if (xrt__is_idstart(c)) {
    xrt__attr_word(p, a, suffix);
  } else if (c == '!') {
    xrt_ir_type *ty = xrt__p_alloc(p, sizeof *ty);
    xrt__parse_type(p, ty);
    a->kind = XRT_ATTR_TYPE;
    a->type = ty;
  } else {
    xrt__skip_balanced(p, true); /* unknown shape: skip it */
    if (p->p == at) xrt__expected(p, "an attribute value");
    a->kind = XRT_ATTR_UNIT;
  }
  p->in_attr = was_in_attr;
  p->depth--;
}

/* Entries `name [= value]` up to `close`, pushed onto p->attrs (the
 * opening bracket is already consumed).  Returns how many. */
static int32_t xrt__parse_dict_entries(xrt__parser *p, char close) {
  int32_t n = 0;
  xrt__depth_in(p);
  if (!xrt__eat(p, close)) {
    do {
      const char *name;
      xrt__tok t;
      if (xrt__peek(p) == '"') {
        name = xrt__parse_string(p, NULL);
      } else {
        t = xrt__ident(p);
        if (!t.n) xrt__expected(p, "an attribute name");
        name = xrt__strdup(p, t.s, t.n);
      }
      xrt_ir_attr a;
      if (xrt__eat(p, '=')) xrt__parse_attr(p, &a, true);
      else memset(&a, 0, sizeof a); /* UNIT */
      a.name = name;
      *(xrt_ir_attr *)xrt__push_raw(p, &p->attrs) = a;
      n++;
    } while (xrt__eat(p, ','));
    if (!xrt__eat(p, close)) {
      char what[4] = {'\'', close, '\'', 0};
      xrt__expected(p, what);
    }
  }
  p->depth--;
  return n;
}

/* ---------------------------------------------------------------------
 * Values, ops and regions
 * ------------------------------------------------------------------- */

/* ---- value types: each distinct type is stored once (a program has a
 * few dozen, and copying 168-byte types per value was a tenth of the time);
 * xrt_ir_func.value_types is expanded from the indices at the end. ---- */

static uint32_t xrt__type_hash(const xrt_ir_type *t) {
  uint32_t h = (uint32_t)t->kind * 31u + (uint32_t)t->shape.dtype;
  h = h * 31u + (uint32_t)t->shape.rank;
  for (int i = 0; i < t->shape.rank; i++) h = h * 0x9e3779b1u + (uint32_t)t->shape.dims[i];
  h ^= (uint32_t)(uintptr_t)t->quant ^ (uint32_t)(uintptr_t)t->elems;
  return h ^ (h >> 15);
}

/* Same struct (quant and tuple elements by identity). */
static bool xrt__type_same(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind || a->shape.dtype != b->shape.dtype ||
      a->shape.rank != b->shape.rank || a->quant != b->quant ||
      a->num_elems != b->num_elems || a->elems != b->elems)
    return false;
  for (int i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return false;
  return true;
}

static void xrt__utab_grow(xrt__parser *p) {
  uint32_t nb = p->utab ? (p->umask + 1) * 2 : 256;
  int32_t *tab = xrt__alloc(&p->arena->allocator, nb * sizeof *tab);
  if (!tab) xrt__oom(p);
  memset(tab, 0xff, nb * sizeof *tab);
  for (size_t i = 0; i < p->utypes.n; i++) {
    uint32_t h = xrt__type_hash(&XRT__VAT(p->utypes, xrt_ir_type, i)) & (nb - 1);
    while (tab[h] >= 0) h = (h + 1) & (nb - 1);
    tab[h] = (int32_t)i;
  }
  xrt__free(&p->arena->allocator, p->utab);
  p->utab = tab;
  p->umask = nb - 1;
}

/* The index of t in p->utypes, added if new. */
static int32_t xrt__intern_type(xrt__parser *p, const xrt_ir_type *t) {
  if (!p->utab || p->utypes.n * 2 >= p->umask) xrt__utab_grow(p);
  uint32_t h = xrt__type_hash(t) & p->umask;
  for (int32_t i; (i = p->utab[h]) >= 0; h = (h + 1) & p->umask)
    if (xrt__type_same(&XRT__VAT(p->utypes, xrt_ir_type, i), t)) return i;
  *(xrt_ir_type *)xrt__push_raw(p, &p->utypes) = *t;
  p->utab[h] = (int32_t)(p->utypes.n - 1);
  return p->utab[h];
}

/* The type of value id (valid until the next xrt__new_value). */
static const xrt_ir_type *xrt__value_type(xrt__parser *p, int32_t id) {
  return &XRT__VAT(p->utypes, xrt_ir_type, XRT__VAT(p->vtypes, int32_t, id));
}

static int32_t xrt__new_value(xrt__parser *p, const xrt_ir_type *t) {
  if (p->vtypes.n >= (size_t)INT32_MAX)
    xrt__perr(p, p->p, XRT_RESOURCE_EXHAUSTED, "too many values");
  int32_t u = xrt__intern_type(p, t);
  *(int32_t *)xrt__push_raw(p, &p->vtypes) = u;
  return (int32_t)(p->vtypes.n - 1);
}

static void xrt__define(xrt__parser *p, xrt__name nm, int32_t id) {
  if (xrt__sym_find(&p->vals, nm.s, nm.n))
    xrt__perr(p, nm.s - 1, XRT_INVALID_ARGUMENT, "redefinition of value %%%.*s",
              (int)nm.n, nm.s);
  xrt__sym_add(p, &p->vals, nm.s, nm.n, id, nm.count);
}

/* %name or %name#k -> value id. */
static int32_t xrt__parse_use(xrt__parser *p) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__expect(p, '%');
  xrt__tok t = xrt__suffix_name(p);
  int64_t idx = 0;
  if (p->p < p->end && *p->p == '#') {
    p->p++;
    xrt__num r = xrt__scan_num(p);
    idx = xrt__num_to_i64(p, &r);
  }
  xrt__sym *s = xrt__sym_find(&p->vals, t.s, t.n);
  if (!s)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "use of undefined value %%%.*s",
              (int)t.n, t.s);
  if (idx < 0 || idx >= s->count)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "%%%.*s has %d results, not #%lld",
              (int)t.n, t.s, (int)s->count, (long long)idx);
  return s->id + (int32_t)idx;
}

/* Pushes an operand or block argument written at `at` (NULL: none). */
static void xrt__push_operand_at(xrt__parser *p, int32_t id, const char *at) {
  *(int32_t *)xrt__push_raw(p, &p->ints) = id;
  *(const char **)xrt__push_raw(p, &p->uses) = at;
}

static void xrt__push_operand(xrt__parser *p, int32_t id) {
  xrt__push_operand_at(p, id, NULL);
}

/* End of the `%name[#k]` written at at (for messages). */
static const char *xrt__use_end(const xrt__parser *p, const char *at) {
  const char *e = at + 1;
  while (e < p->end && (xrt__is_namechar(*e) || *e == '#')) e++;
  return e;
}

/* Parses a use and pushes it as the op's next operand. */
static void xrt__p_operand(xrt__parser *p) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__push_operand_at(p, xrt__parse_use(p), at);
}

/* Drops ints (and their uses) back to mark. */
static void xrt__ints_pop(xrt__parser *p, size_t mark) {
  p->ints.n = p->uses.n = mark;
}

static bool xrt__quant_eq(const xrt_ir_quant *a, const xrt_ir_quant *b) {
  if (!a || !b) return a == b;
  if (a->storage != b->storage || a->expressed != b->expressed ||
      a->storage_min != b->storage_min || a->storage_max != b->storage_max ||
      a->axis != b->axis || a->num_scales != b->num_scales)
    return false;
  for (int32_t i = 0; i < a->num_scales; i++)
    if (a->scales[i] != b->scales[i] || a->zero_points[i] != b->zero_points[i])
      return false;
  return true;
}

static bool xrt__p_type_eq(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == XRT_TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return false;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!xrt__p_type_eq(&a->elems[i], &b->elems[i])) return false;
    return true;
  }
  if (a->kind == XRT_TYPE_TOKEN) return true;
  if (a->shape.dtype != b->shape.dtype || a->shape.rank != b->shape.rank)
    return false;
  for (int i = 0; i < a->shape.rank; i++)
    if (a->shape.dims[i] != b->shape.dims[i]) return false;
  return xrt__quant_eq(a->quant, b->quant);
}

/* Appends t in MLIR syntax to buf[*n..cap) (truncating). */
static void xrt__p_type_fmt(const xrt_ir_type *t, char *buf, size_t cap, size_t *n) {
#define XRT__FMT(...)                                                         \
  do {                                                                        \
    if (*n < cap) {                                                           \
      int k_ = snprintf(buf + *n, cap - *n, __VA_ARGS__);                     \
      *n = k_ < 0 ? cap : *n + (size_t)k_;                                    \
    }                                                                         \
  } while (0)
  if (t->kind == XRT_TYPE_TOKEN) {
    XRT__FMT("!stablehlo.token");
  } else if (t->kind == XRT_TYPE_TUPLE) {
    XRT__FMT("tuple<");
    for (int32_t i = 0; i < t->num_elems; i++) {
      if (i) XRT__FMT(", ");
      xrt__p_type_fmt(&t->elems[i], buf, cap, n);
    }
    XRT__FMT(">");
  } else {
    XRT__FMT("tensor<");
    for (int i = 0; i < t->shape.rank; i++)
      XRT__FMT("%lldx", (long long)t->shape.dims[i]);
    if (t->quant)
      XRT__FMT("!quant.uniform<%s:%s>", xrt_dtype_name(t->quant->storage),
               xrt_dtype_name(t->quant->expressed));
    else
      XRT__FMT("%s", xrt_dtype_name(t->shape.dtype));
    XRT__FMT(">");
  }
#undef XRT__FMT
  if (*n >= cap && cap >= 4) memcpy(buf + cap - 4, "...", 4);
}

/* An op under construction; its pieces sit on the scratch stacks above
 * these marks until xrt__finish_op copies them. */
typedef struct xrt__opb {
  xrt_ir_op op;
  const char *at;        /* the op name: its loc, and errors about the op */
  size_t names_mark;     /* result names on p->names */
  int32_t num_names;     /* results the op declares (0: none written) */
  size_t operands_mark;  /* p->ints */
  size_t attrs_mark;     /* p->attrs */
  size_t regions_mark;   /* p->regions */
  size_t rtypes_mark;    /* p->tys: result types */
  int positional;        /* bare keywords seen (compare LT ... FLOAT) */
  int check;             /* check.* lowering kind, 0 if none */
  xrt_ir_attr dot[4];    /* dot_general pretty dims */
} xrt__opb;

/* The op's syntax states type t for its operand k: it must be the type the
 * value was defined with (reported at the use, as MLIR does). */
static void xrt__check_use(xrt__parser *p, const xrt__opb *b, int32_t k,
                           const xrt_ir_type *t) {
  size_t i = b->operands_mark + (size_t)k;
  const xrt_ir_type *have = xrt__value_type(p, XRT__VAT(p->ints, int32_t, i));
  const char *at = XRT__VAT(p->uses, const char *, i);
  if (!at || xrt__p_type_eq(have, t)) return;
  const char *e = xrt__use_end(p, at);
  char want[160], got[160];
  size_t nw = 0, ng = 0;
  xrt__p_type_fmt(t, want, sizeof want, &nw);
  xrt__p_type_fmt(have, got, sizeof got, &ng);
  xrt__perr(p, at, XRT_INVALID_ARGUMENT,
            "use of value '%.*s' expects type %s but it has type %s",
            (int)(e - at), at, want, got);
}

/* Operands [from, from + n) all have the written type t. */
static void xrt__check_uses(xrt__parser *p, const xrt__opb *b, int32_t from,
                            int32_t n, const xrt_ir_type *t) {
  for (int32_t k = from; k < from + n; k++) xrt__check_use(p, b, k, t);
}

static void xrt__add_attr(xrt__parser *p, const char *name, const xrt_ir_attr *a) {
  xrt_ir_attr *d = xrt__push(p, &p->attrs);
  *d = *a;
  d->name = name;
}

static xrt_ir_attr *xrt__find_attr(xrt__parser *p, xrt__opb *b, const char *name) {
  for (size_t i = b->attrs_mark; i < p->attrs.n; i++) {
    xrt_ir_attr *a = &XRT__VAT(p->attrs, xrt_ir_attr, i);
    if (a->name && !strcmp(a->name, name)) return a;
  }
  return NULL;
}

static void xrt__push_op(xrt__parser *p, const xrt_ir_op *op) {
  *(xrt_ir_op *)xrt__push_raw(p, &p->ops) = *op;
}

/* Copies the op's pieces to the arena, defines its results, pushes it. */
static void xrt__finish_op(xrt__parser *p, xrt__opb *b) {
  int32_t nt = (int32_t)(p->tys.n - b->rtypes_mark);
  if (b->num_names && nt != b->num_names)
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT,
              "op '%s' defines %d results but its type has %d",
              b->op.name, (int)b->num_names, (int)nt);
  int32_t *res = nt ? xrt__p_alloc(p, (size_t)nt * sizeof *res) : NULL;
  for (int32_t i = 0; i < nt; i++)
    res[i] = xrt__new_value(p, &XRT__VAT(p->tys, xrt_ir_type, b->rtypes_mark + i));
  int32_t id = 0;
  for (size_t i = b->names_mark; i < p->names.n; i++) {
    xrt__name nm = XRT__VAT(p->names, xrt__name, i);
    xrt__define(p, nm, res ? res[id] : 0);
    id += nm.count;
  }
  b->op.num_results = nt;
  b->op.results = res;
  b->op.num_operands = (int32_t)(p->ints.n - b->operands_mark);
  b->op.operands = xrt__vcopy(p, &p->ints, b->operands_mark);
  b->op.num_attrs = (int32_t)(p->attrs.n - b->attrs_mark);
  b->op.attrs = xrt__vcopy(p, &p->attrs, b->attrs_mark);
  b->op.num_regions = (int32_t)(p->regions.n - b->regions_mark);
  b->op.regions = xrt__vcopy(p, &p->regions, b->regions_mark);
  p->names.n = b->names_mark;
  xrt__ints_pop(p, b->operands_mark);
  p->attrs.n = b->attrs_mark;
  p->regions.n = b->regions_mark;
  p->tys.n = b->rtypes_mark;
  xrt__push_op(p, &b->op);
}

/* A region being built: a scope for names, its ops and block args. */
typedef struct xrt__rgn {
  size_t sym_mark, ops_mark, args_mark;
} xrt__rgn;

static void xrt__rgn_begin(xrt__parser *p, xrt__rgn *r) {
  xrt__depth_in(p);
  r->sym_mark = p->vals.syms.n;
  r->ops_mark = p->ops.n;
  r->args_mark = p->ints.n;
}

/* Adds a block argument (nm.n == 0: unnamed). */
static int32_t xrt__rgn_arg(xrt__parser *p, xrt__name nm, const xrt_ir_type *t) {
  int32_t id = xrt__new_value(p, t);
  if (nm.n) xrt__define(p, nm, id);
  xrt__push_operand_at(p, id, nm.n ? nm.s - 1 : NULL);
  return id;
}

static xrt_ir_region xrt__rgn_end(xrt__parser *p, xrt__rgn *r) {
  xrt_ir_region g;
  g.num_args = (int32_t)(p->ints.n - r->args_mark);
  g.args = xrt__vcopy(p, &p->ints, r->args_mark);
  g.num_ops = (int32_t)(p->ops.n - r->ops_mark);
  g.ops = xrt__vcopy(p, &p->ops, r->ops_mark);
  xrt__ints_pop(p, r->args_mark);
  p->ops.n = r->ops_mark;
  xrt__sym_pop(&p->vals, r->sym_mark);
  p->depth--;
  return g;
}

static void xrt__push_region(xrt__parser *p, const xrt_ir_region *g) {
  *(xrt_ir_region *)xrt__push_raw(p, &p->regions) = *g;
}

static void xrt__parse_op(xrt__parser *p);

/* `%name : type [loc]` of a block or function argument. */
static void xrt__parse_arg(xrt__parser *p, xrt__name *nm, xrt_ir_type *t) {
  xrt__expect(p, '%');
  xrt__tok n = xrt__suffix_name(p);
  nm->s = n.s;
  nm->n = (uint32_t)n.n;
  nm->count = 1;
  xrt__expect(p, ':');
  xrt__parse_type(p, t);
}

/* ^bb0(%a: T, ...): */
static void xrt__parse_block_label(xrt__parser *p) {
  p->p++; /* '^' */
  xrt__suffix_name(p);
  if (xrt__eat(p, '(') && !xrt__eat(p, ')')) {
    do {
      xrt__name nm;
      xrt_ir_type t;
      xrt__parse_arg(p, &nm, &t);
      xrt__skip_loc(p);
      xrt__rgn_arg(p, nm, &t);
    } while (xrt__eat(p, ','));
    xrt__expect(p, ')');
  }
  xrt__expect(p, ':');
}

/* `{ [^bb(args):] ops }` into a region already begun. */
static void xrt__parse_block(xrt__parser *p, xrt__rgn *r, bool label_ok) {
  xrt__expect(p, '{');
  if (label_ok && xrt__peek(p) == '^') xrt__parse_block_label(p);
  for (;;) {
    int c = xrt__peek(p);
    if (c == '}') break;
    if (c < 0) xrt__expected(p, "'}'");
    if (c == '^')
      xrt__perr(p, p->p, XRT_UNIMPLEMENTED, "regions with several blocks");
    xrt__parse_op(p);
  }
  p->p++;
  (void)r;
}

/* A whole generic region `{...}` with its own scope. */
static void xrt__parse_region(xrt__parser *p) {
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  xrt__parse_block(p, &r, true);
  xrt_ir_region g = xrt__rgn_end(p, &r);
  xrt__push_region(p, &g);
}

/* Parses `T, T, ...` or `(T, ...)` types onto p->tys; returns the count. */
static int32_t xrt__parse_types(xrt__parser *p, bool parens) {
  size_t mark = p->tys.n;
  if (parens) xrt__expect(p, '(');
  if (!parens || xrt__peek(p) != ')') {
    do {
      xrt_ir_type t;
      xrt__parse_type(p, &t);
      *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = t;
    } while (xrt__eat(p, ','));
  }
  if (parens) xrt__expect(p, ')');
  return (int32_t)(p->tys.n - mark);
}

/* `(ins) -> outs`; leaves outs on p->tys as the result types. */
static void xrt__parse_fn_type(xrt__parser *p, xrt__opb *b) {
  xrt__ws(p);
  const char *at = p->p;
  int32_t nops = (int32_t)(p->ints.n - b->operands_mark);
  int32_t nin = xrt__parse_types(p, true);
  if (nin != nops)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "op '%s' has %d operands but its type lists %d",
              b->op.name, (int)nops, (int)nin);
  p->tys.n -= (size_t)nin; /* still readable: nothing pushed since */
  for (int32_t k = 0; k < nin; k++)
    xrt__check_use(p, b, k, &XRT__VAT(p->tys, xrt_ir_type, p->tys.n + (size_t)k));
  if (!xrt__eat_arrow(p)) xrt__expected(p, "'->'");
  xrt__parse_types(p, xrt__peek(p) == '(');
}

/* Checks the operand types a pretty type list `: T, ...` (k types, not a
 * function type) states.  Each type is an operand's when there is one per
 * operand, or the single type stands for every operand (elementwise ops,
 * return, check.*); select's `pred_type, result_type` covers its operands
 * too.  tuple and complex list only their result's type. */
static void xrt__sig_uses(xrt__parser *p, const xrt__opb *b,
                          const xrt_ir_type *ty, int32_t k) {
  int32_t nops = (int32_t)(p->ints.n - b->operands_mark), nres = b->num_names;
  xrt_opcode code = b->op.code;
  if (code == XRT_OP_TUPLE || code == XRT_OP_COMPLEX) return;
  if (nres == k || nres == 0) {
    if (k == nops)
      for (int32_t i = 0; i < k; i++) xrt__check_use(p, b, i, &ty[i]);
    else if (k == 1)
      xrt__check_uses(p, b, 0, nops, &ty[0]);
  } else if (code == XRT_OP_SELECT && nres == 1 && k == 2 && nops == 3) {
    xrt__check_use(p, b, 0, &ty[0]);
    xrt__check_uses(p, b, 1, 2, &ty[1]);
  }
}

/* The type after ':' in pretty syntax: a function type, or a type list
 * whose meaning depends on how many results the op declares. */
static void xrt__parse_pretty_sig(xrt__parser *p, xrt__opb *b) {
  xrt__ws(p);
  const char *at = p->p;
  if (xrt__peek(p) == '(') {
    xrt__parse_fn_type(p, b);
    return;
  }
  int32_t nops = (int32_t)(p->ints.n - b->operands_mark);
  size_t tm = p->tys.n;
  int32_t k = xrt__parse_types(p, false), nres = b->num_names;
  xrt__sig_uses(p, b, &XRT__VAT(p->tys, xrt_ir_type, tm), k);
  if (nres == k) return;
  if (nres == 1) { /* select: pred type, result type */
    XRT__VAT(p->tys, xrt_ir_type, b->rtypes_mark) =
        XRT__VAT(p->tys, xrt_ir_type, p->tys.n - 1);
    p->tys.n = b->rtypes_mark + 1;
    return;
  }
  if (nres == 0 && (k == nops || k == 1)) {
    p->tys.n = b->rtypes_mark;
    return;
  }
  xrt__perr(p, at, XRT_INVALID_ARGUMENT,
            "op '%s' has %d operands and %d results but lists %d types",
            b->op.name, (int)nops, (int)nres, (int)k);
}

/* Optional `{attr-dict}` onto the op's attributes. */
static void xrt__opt_attr_dict(xrt__parser *p) {
  if (xrt__eat(p, '{')) xrt__parse_dict_entries(p, '}');
}

/* ---- check.* lowering ---- */

/* The interpreter's test ops (check.*, interpreter.print/probe/
 * run_parallel) become custom_calls of host functions with the op's name
 * as target. */
enum { XRT__P_CHECK_EQ = 1, XRT__CHECK_ALMOST_EQ, XRT__P_CHECK_CLOSE,
       XRT__P_PRINT, XRT__P_PROBE, XRT__P_SERIALIZED_EQ, XRT__P_RUN_PARALLEL };

static const char *const xrt__check_targets[] = {
    "", "check.expect_eq", "check.expect_almost_eq", "check.expect_close",
    "interpreter.print", "interpreter.probe", "check.expect_serialized_eq",
    "interpreter.run_parallel"};

static int xrt__p_check_kind(xrt__tok t, bool *is_const) {
  static const char *const names[] = {"check.expect_eq", "check.expect_almost_eq",
                                      "check.expect_close"};
  for (int i = XRT__P_PRINT; i <= XRT__P_RUN_PARALLEL; i++)
    if (xrt__tok_is(t, xrt__check_targets[i])) return i;
  if (t.n < 6 || memcmp(t.s, "check.", 6)) return 0;
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(names[i]);
    if (t.n >= n && !memcmp(t.s, names[i], n)) {
      *is_const = t.n == n + 6 && !memcmp(t.s + n, "_const", 6);
      if (t.n == n || (*is_const && i < 2)) return i + 1;
    }
  }
  return 0;
}

/* The constant operand of check.expect_*_const: a CONSTANT op before it. */
static void xrt__check_const_operand(xrt__parser *p, xrt__opb *b,
                                     const xrt_ir_literal *lit) {
  xrt_ir_op c;
  memset(&c, 0, sizeof c);
  c.code = XRT_OP_CONSTANT;
  c.name = xrt_opcode_name(XRT_OP_CONSTANT);
  c.loc = b->op.loc;
  xrt_ir_attr *a = xrt__p_alloc(p, sizeof *a);
  a->name = "value";
  a->kind = XRT_ATTR_DENSE;
  a->lit = lit;
  c.attrs = a;
  c.num_attrs = 1;
  int32_t *res = xrt__p_alloc(p, sizeof *res);
  *res = xrt__new_value(p, &lit->type);
  c.results = res;
  c.num_results = 1;
  xrt__push_op(p, &c);
  xrt__push_operand(p, *res);
}

/* interpreter.probe returns its operand (one result of its type);
 * probe_id is a string; expect_serialized_eq's iter defaults to 0. */
static void xrt__interp_finish(xrt__parser *p, xrt__opb *b) {
  int32_t nops = (int32_t)(p->ints.n - b->operands_mark);
  int32_t nres = (int32_t)(p->tys.n - b->rtypes_mark);
  if (nops != 1)
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "%s takes one operand, not %d",
              xrt__check_targets[b->check], (int)nops);
  const xrt_ir_type *t = xrt__value_type(p, XRT__VAT(p->ints, int32_t, b->operands_mark));
  if (b->check == XRT__P_PROBE && nres == 0 && !b->num_names)
    *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = *t;
  else if (nres != (b->check == XRT__P_PROBE))
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "%s has %d results, not %d",
              xrt__check_targets[b->check], (int)nres, b->check == XRT__P_PROBE);
  if (b->check == XRT__P_PROBE &&
      !xrt__p_type_eq(&XRT__VAT(p->tys, xrt_ir_type, b->rtypes_mark), t))
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT,
              "interpreter.probe's result type must be its operand's");
  if (b->check == XRT__P_PRINT) return;
  xrt_ir_attr *id = xrt__find_attr(p, b, "probe_id");
  if (!id || id->kind != XRT_ATTR_STRING)
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "%s needs a string probe_id",
              xrt__check_targets[b->check]);
  if (b->check != XRT__P_SERIALIZED_EQ) return;
  xrt_ir_attr *it = xrt__find_attr(p, b, "iter");
  if (it && (it->kind != XRT_ATTR_INT || it->i < 0))
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "iter must be an integer >= 0");
  if (!it) {
    xrt_ir_attr a;
    memset(&a, 0, sizeof a);
    a.kind = XRT_ATTR_INT;
    xrt__add_attr(p, "iter", &a);
  }
}

/* Is a a LIST of n >= 1 SYMBOLs (n stored in *n)? */
static bool xrt__symbol_list(const xrt_ir_attr *a, int32_t *n) {
  if (!a || a->kind != XRT_ATTR_LIST || a->num_items < 1) return false;
  for (int32_t i = 0; i < a->num_items; i++)
    if (a->items[i].kind != XRT_ATTR_SYMBOL) return false;
  *n = a->num_items;
  return true;
}

/* interpreter.run_parallel: programs = [[@f, ...], ...] (replicas of
 * equally many partitions) and an optional infeed = [@q, ...].  Operands
 * and results are matched with the programs' parameters and results when
 * the host function runs them (the functions may come later in the
 * module). */
static void xrt__run_parallel_finish(xrt__parser *p, xrt__opb *b) {
  xrt_ir_attr *progs = xrt__find_attr(p, b, "programs");
  int32_t parts = 0, n = 0;
  bool ok = progs && progs->kind == XRT_ATTR_LIST && progs->num_items >= 1;
  for (int32_t r = 0; ok && r < progs->num_items; r++) {
    ok = xrt__symbol_list(&progs->items[r], &n) && (r == 0 || n == parts);
    parts = n;
  }
  if (!ok)
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "interpreter.run_parallel needs "
              "programs = [[@f, ...], ...]: one non-empty list of functions "
              "per replica, all of the same length");
  xrt_ir_attr *feed = xrt__find_attr(p, b, "infeed");
  if (feed && !xrt__symbol_list(feed, &n))
    xrt__perr(p, b->at, XRT_INVALID_ARGUMENT, "interpreter.run_parallel's "
              "infeed must be a list of functions [@f, ...]");
}

/* Target name and default attributes of a lowered check op. */
static void xrt__check_finish(xrt__parser *p, xrt__opb *b) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  b->op.code = XRT_OP_CUSTOM_CALL;
  b->op.name = xrt_opcode_name(XRT_OP_CUSTOM_CALL);
  a.kind = XRT_ATTR_STRING;
  a.s = xrt__check_targets[b->check];
  a.n = (int64_t)strlen(a.s);
  xrt__add_attr(p, "call_target_name", &a);
  if (b->check == XRT__P_RUN_PARALLEL) {
    xrt__run_parallel_finish(p, b);
  } else if (b->check >= XRT__P_PRINT) {
    xrt__interp_finish(p, b);
  } else if (b->check == XRT__CHECK_ALMOST_EQ) {
    xrt_ir_attr *t = xrt__find_attr(p, b, "tolerance");
    if (!t) {
      memset(&a, 0, sizeof a);
      a.kind = XRT_ATTR_FLOAT;
      a.f = 0.0001;
      xrt__add_attr(p, "tolerance", &a);
    } else if (t->kind == XRT_ATTR_INT) {
      t->kind = XRT_ATTR_FLOAT;
      t->f = (double)t->i;
    }
  } else if (b->check == XRT__P_CHECK_CLOSE) {
    static const char *const ulps[] = {"min_ulp_difference", "max_ulp_difference"};
    for (int i = 0; i < 2; i++) {
      if (xrt__find_attr(p, b, ulps[i])) continue;
      memset(&a, 0, sizeof a);
      a.kind = XRT_ATTR_INT;
      a.i = i ? 3 : 0;
      xrt__add_attr(p, ulps[i], &a);
    }
  }
}

/* ---- pretty syntax ---- */

/* Attribute names of the pretty keywords `key = value`. */
static const char *xrt__pretty_key(xrt_opcode code, xrt__tok key) {
  static const struct { xrt_opcode op; const char *key, *name; } map[] = {
      {XRT_OP_IOTA, "dim", "iota_dimension"},
      {XRT_OP_DYNAMIC_IOTA, "dim", "iota_dimension"},
      {XRT_OP_BROADCAST_IN_DIM, "dims", "broadcast_dimensions"},
      {XRT_OP_DYNAMIC_BROADCAST_IN_DIM, "dims", "broadcast_dimensions"},
      {XRT_OP_TRANSPOSE, "dims", "permutation"},
      {XRT_OP_CONCATENATE, "dim", "dimension"},
      {XRT_OP_PAD, "low", "edge_padding_low"},
      {XRT_OP_PAD, "high", "edge_padding_high"},
      {XRT_OP_PAD, "interior", "interior_padding"},
      {XRT_OP_REVERSE, "dims", "dimensions"},
      {XRT_OP_BROADCAST, "sizes", "broadcast_sizes"},
      {XRT_OP_GET_DIMENSION_SIZE, "dim", "dimension"},
      {XRT_OP_FFT, "type", "fft_type"},
      {XRT_OP_FFT, "length", "fft_length"},
      {XRT_OP_DOT_GENERAL, "precision", "precision_config"},
      {XRT_OP_DOT, "precision", "precision_config"},
      {XRT_OP_CONVOLUTION, "dim_numbers", "dimension_numbers"},
      {XRT_OP_SORT, "dim", "dimension"},
      {XRT_OP_DYNAMIC_SLICE, "sizes", "slice_sizes"},
      {XRT_OP_RNG, "distribution", "rng_distribution"},
      {XRT_OP_RNG_BIT_GENERATOR, "algorithm", "rng_algorithm"},
      {XRT_OP_DYNAMIC_CONV, "dim_numbers", "dimension_numbers"},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (map[i].op == code && xrt__tok_is(key, map[i].key)) return map[i].name;
  return NULL;
}

/* `[0] x [1]` of dot_general: two INTS into b->dot. */
static void xrt__pretty_dot_dims(xrt__parser *p, xrt__opb *b, int which) {
  static const char *const names[4] = {
      "lhs_batching_dimensions", "rhs_batching_dimensions",
      "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  for (int side = 0; side < 2; side++) {
    if (side) xrt__expect_kw(p, "x");
    xrt_ir_attr *a = &b->dot[which * 2 + side];
    xrt__ws(p);
    const char *at = p->p;
    xrt__parse_attr(p, a, false);
    if (a->kind != XRT_ATTR_INTS)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected a list of dimensions");
    a->name = names[which * 2 + side];
  }
}

/* reduce_precision format = e5m10 -> exponent_bits, mantissa_bits. */
static void xrt__pretty_format(xrt__parser *p, const char *at, const xrt_ir_attr *v) {
  const char *s = v->kind == XRT_ATTR_ENUM ? v->s : "";
  long e = 0, m = 0;
  int used = 0;
  if (sscanf(s, "e%ldm%ld%n", &e, &m, &used) != 2 || s[used])
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected a format like e5m10");
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.kind = XRT_ATTR_INT;
  a.i = e;
  xrt__add_attr(p, "exponent_bits", &a);
  a.i = m;
  xrt__add_attr(p, "mantissa_bits", &a);
}

/* `reverse = [false, true]` in a conv window: INTS 0/1 like array<i1>. */
static void xrt__window_bools(xrt__parser *p, xrt_ir_attr *w) {
  if (w->kind != XRT_ATTR_DICT) return;
  for (int32_t i = 0; i < w->num_items; i++) {
    xrt_ir_attr *f = (xrt_ir_attr *)&w->items[i]; /* ours: in the arena */
    bool bools = f->kind == XRT_ATTR_LIST && f->num_items > 0;
    for (int32_t k = 0; bools && k < f->num_items; k++)
      bools = f->items[k].kind == XRT_ATTR_BOOL;
    if (!bools) continue;
    int64_t *v = xrt__p_alloc(p, (size_t)f->num_items * sizeof *v);
    for (int32_t k = 0; k < f->num_items; k++) v[k] = f->items[k].i;
    f->kind = XRT_ATTR_INTS;
    f->ints = v;
    f->n = f->num_items;
    f->items = NULL;
    f->num_items = 0;
  }
}

/* `key = value` in pretty syntax. */
static void xrt__pretty_keyval(xrt__parser *p, xrt__opb *b, xrt__tok key) {
  xrt_opcode code = b->op.code;
  xrt__expect(p, '=');
  xrt__ws(p);
  const char *at = p->p;
  if (code == XRT_OP_DOT_GENERAL && xrt__tok_is(key, "batching_dims")) {
    xrt__pretty_dot_dims(p, b, 0);
    return;
  }
  if (code == XRT_OP_DOT_GENERAL && xrt__tok_is(key, "contracting_dims")) {
    xrt__pretty_dot_dims(p, b, 1);
    return;
  }
  xrt_ir_attr v;
  bool conv = code == XRT_OP_CONVOLUTION || code == XRT_OP_DYNAMIC_CONV;
  if (conv && xrt__tok_is(key, "dim_numbers")) {
    memset(&v, 0, sizeof v);
    xrt__skip_balanced(p, true);
    v.kind = XRT_ATTR_STRING;
    v.s = xrt__strdup(p, at, (size_t)(p->p - at));
    v.n = p->p - at;
  } else {
    xrt__parse_attr(p, &v, false);
  }
  if (conv && xrt__tok_is(key, "window")) xrt__window_bools(p, &v);
  if (code == XRT_OP_REDUCE_PRECISION && xrt__tok_is(key, "format")) {
    xrt__pretty_format(p, at, &v);
    return;
  }
  const char *name = xrt__pretty_key(code, key);
  xrt__add_attr(p, name ? name : xrt__strdup(p, key.s, key.n), &v);
}

/* A bare keyword item (compare LT ... FLOAT). */
static void xrt__pretty_keyword(xrt__parser *p, xrt__opb *b, xrt__tok t) {
  static const char *const cmp[2] = {"comparison_direction", "compare_type"};
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.kind = XRT_ATTR_ENUM;
  a.s = xrt__strdup(p, t.s, t.n);
  a.n = (int64_t)t.n;
  const char *name = "keyword";
  if (b->op.code == XRT_OP_COMPARE && b->positional < 2) name = cmp[b->positional];
  b->positional++;
  xrt__add_attr(p, name, &a);
}

static void xrt__add_ints(xrt__parser *p, const char *name, size_t mark, size_t n) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.kind = XRT_ATTR_INTS;
  a.n = (int64_t)n;
  a.ints = n ? xrt__p_alloc(p, n * sizeof(int64_t)) : NULL;
  if (n) memcpy((void *)a.ints, &XRT__VAT(p->i64s, int64_t, mark), n * sizeof(int64_t));
  xrt__add_attr(p, name, &a);
}

/* `%x[0]` (get_tuple_element) or `%x [1:3, 0:4:2]` (slice). */
static void xrt__pretty_brackets(xrt__parser *p) {
  xrt__expect(p, '[');
  size_t mark = p->i64s.n, n = 0;
  bool slice = false;
  if (!xrt__eat(p, ']')) {
    do {
      int64_t v[3] = {0, 0, 1};
      v[0] = xrt__parse_i64(p);
      if (xrt__eat(p, ':')) {
        slice = true;
        v[1] = xrt__parse_i64(p);
        if (xrt__eat(p, ':')) v[2] = xrt__parse_i64(p);
      }
      for (int i = 0; i < 3; i++) *(int64_t *)xrt__push_raw(p, &p->i64s) = v[i];
      n++;
    } while (xrt__eat(p, ','));
    xrt__expect(p, ']');
  } else {
    slice = true;
  }
  int64_t *v = n ? &XRT__VAT(p->i64s, int64_t, mark) : NULL;
  if (!slice) {
    xrt_ir_attr a;
    memset(&a, 0, sizeof a);
    a.kind = XRT_ATTR_INT;
    a.i = v[0];
    xrt__add_attr(p, "index", &a);
    p->i64s.n = mark;
    return;
  }
  for (size_t i = 0; i < n; i++) { /* transpose [n][3] into three runs */
    int64_t s = v[3 * i], l = v[3 * i + 1], st = v[3 * i + 2];
    *(int64_t *)xrt__push_raw(p, &p->i64s) = s;
    *(int64_t *)xrt__push_raw(p, &p->i64s) = l;
    *(int64_t *)xrt__push_raw(p, &p->i64s) = st;
  }
  size_t base = mark + 3 * n;
  for (int k = 0; k < 3; k++) /* gather column k into a contiguous run */
    for (size_t i = 0; i < n; i++)
      XRT__VAT(p->i64s, int64_t, mark + k * n + i) = XRT__VAT(p->i64s, int64_t, base + 3 * i + k);
  xrt__add_ints(p, "start_indices", mark, n);
  xrt__add_ints(p, "limit_indices", mark + n, n);
  xrt__add_ints(p, "strides", mark + 2 * n, n);
  p->i64s.n = mark;
}

static void xrt__paren_operands(xrt__parser *p) {
  xrt__expect(p, '(');
  if (xrt__eat(p, ')')) return;
  do xrt__p_operand(p);
  while (xrt__eat(p, ','));
  xrt__expect(p, ')');
}

/* Comma-separated operands, keywords and `key = value` items. */
static void xrt__pretty_items(xrt__parser *p, xrt__opb *b) {
  for (;;) {
    int c = xrt__peek(p);
    bool comma_optional = false;
    if (c == '%') {
      xrt__p_operand(p);
      if (xrt__peek(p) == '[') xrt__pretty_brackets(p);
    } else if (c == '(') {
      xrt__paren_operands(p);
      comma_optional = true;
    } else if (c == '"') {
      xrt_ir_attr a;
      xrt__parse_attr(p, &a, false);
      xrt__add_attr(p, "name", &a);
      comma_optional = true;
    } else if (xrt__is_idstart(c) && !(xrt__peek_kw(p, "loc") )) {
      xrt__tok t = xrt__ident(p);
      if (xrt__peek(p) == '=') xrt__pretty_keyval(p, b, t);
      else xrt__pretty_keyword(p, b, t);
    } else {
      break;
    }
    if (xrt__eat(p, ',')) continue;
    if (!comma_optional) break;
  }
  int nd = 0;
  for (int i = 0; i < 4; i++) nd += b->dot[i].name != NULL;
  if (nd) {
    xrt_ir_attr d;
    memset(&d, 0, sizeof d);
    xrt_ir_attr *items = xrt__p_alloc(p, (size_t)nd * sizeof *items);
    for (int i = 0, k = 0; i < 4; i++)
      if (b->dot[i].name) items[k++] = b->dot[i];
    d.kind = XRT_ATTR_DICT;
    d.items = items;
    d.num_items = nd;
    xrt__add_attr(p, "dot_dimension_numbers", &d);
  }
}

/* The common pretty form: items, optional attr-dict, `: types`. */
static void xrt__pretty_common(xrt__parser *p, xrt__opb *b) {
  xrt__pretty_items(p, b);
  xrt__opt_attr_dict(p);
  if (xrt__eat(p, ':')) {
    xrt__parse_pretty_sig(p, b);
    if (b->check) xrt__opt_attr_dict(p);
  } else if (p->ints.n != b->operands_mark || b->num_names) {
    xrt__expected(p, "':'");
  }
}

/* `stablehlo.constant() <{value = ..}> : () -> T`: how MLIR prints a
 * constant whose value's type differs from its result's (quantized). */
static void xrt__pretty_constant_fn(xrt__parser *p, xrt__opb *b) {
  xrt__paren_operands(p);
  if (xrt__peek(p) == '<' && xrt__peek2(p) == '{') {
    p->p += 2;
    xrt__parse_dict_entries(p, '}');
    xrt__expect(p, '>');
  }
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
  xrt_ir_attr *v = xrt__find_attr(p, b, "value");
  if (v && v->lit) v->kind = XRT_ATTR_DENSE;
}

static void xrt__pretty_constant(xrt__parser *p) {
  xrt__opt_attr_dict(p);
  xrt_ir_literal *lit = xrt__p_alloc(p, sizeof *lit);
  xrt__parse_dense(p, lit);
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.kind = XRT_ATTR_DENSE;
  a.lit = lit;
  xrt__add_attr(p, "value", &a);
  *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = lit->type;
}

/* `@callee(%a, ...) [{attrs}] : (T) -> T` of func.call and custom_call. */
static void xrt__pretty_call(xrt__parser *p, xrt__opb *b) {
  xrt_ir_attr a;
  xrt__ws(p);
  if (xrt__peek(p) != '@') xrt__expected(p, "'@'");
  xrt__parse_attr(p, &a, false);
  if (b->op.code == XRT_OP_CUSTOM_CALL) a.kind = XRT_ATTR_STRING;
  xrt__add_attr(p, b->op.code == XRT_OP_FUNC_CALL ? "callee" : "call_target_name", &a);
  xrt__paren_operands(p);
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
}

/* check.expect_*_const %a, dense<..> : T [{attrs}] */
static void xrt__pretty_check_const(xrt__parser *p, xrt__opb *b) {
  xrt__p_operand(p);
  xrt__expect(p, ',');
  xrt_ir_literal *lit = xrt__p_alloc(p, sizeof *lit);
  xrt__parse_dense(p, lit);
  xrt__opt_attr_dict(p);
  xrt__check_const_operand(p, b, lit);
}

/* A region whose block args are named by names[from..] with the types
 * tys[tmark..] (while's cond/do). */
static void xrt__region_named(xrt__parser *p, size_t from, size_t tmark, int32_t n) {
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  for (int32_t i = 0; i < n; i++) {
    xrt_ir_type t = XRT__VAT(p->tys, xrt_ir_type, tmark + (size_t)i);
    xrt__rgn_arg(p, XRT__VAT(p->names, xrt__name, from + (size_t)i), &t);
  }
  xrt__parse_block(p, &r, false);
  xrt_ir_region g = xrt__rgn_end(p, &r);
  xrt__push_region(p, &g);
}

/* while(%a = %init, ...) : T, ... [attributes {..}] cond {..} do {..} */
static void xrt__pretty_while(xrt__parser *p, xrt__opb *b) {
  size_t from = p->names.n;
  xrt__expect(p, '(');
  if (!xrt__eat(p, ')')) {
    do {
      xrt__expect(p, '%');
      xrt__tok t = xrt__suffix_name(p);
      xrt__name *nm = xrt__push(p, &p->names);
      nm->s = t.s;
      nm->n = (uint32_t)t.n;
      nm->count = 1;
      xrt__expect(p, '=');
      xrt__p_operand(p);
    } while (xrt__eat(p, ','));
    xrt__expect(p, ')');
  }
  int32_t n = (int32_t)(p->names.n - from);
  xrt__ws(p);
  const char *at = p->p;
  if (n) {
    xrt__expect(p, ':');
    if (xrt__parse_types(p, false) != n)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT,
                "while has %d loop values but lists a different number of types",
                (int)n);
    for (int32_t i = 0; i < n; i++) /* operand types = result types */
      xrt__check_use(p, b, i, &XRT__VAT(p->tys, xrt_ir_type, b->rtypes_mark + (size_t)i));
  }
  if (xrt__eat_kw(p, "attributes")) xrt__opt_attr_dict(p);
  xrt__expect_kw(p, "cond");
  xrt__region_named(p, from, b->rtypes_mark, n);
  xrt__expect_kw(p, "do");
  xrt__region_named(p, from, b->rtypes_mark, n);
  p->names.n = from;
}

/* reduce ... applies OP: the body `r = OP a, b; return r` is synthesized. */
static void xrt__reduce_applies(xrt__parser *p, xrt__opb *b, xrt_opcode code,
                                int32_t init) {
  xrt_ir_type t = *xrt__value_type(p, init);
  xrt__name none = {NULL, 0, 1};
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  int32_t *ops = xrt__p_alloc(p, 2 * sizeof *ops), *res = xrt__p_alloc(p, sizeof *res);
  ops[0] = xrt__rgn_arg(p, none, &t);
  ops[1] = xrt__rgn_arg(p, none, &t);
  *res = xrt__new_value(p, &t);
  xrt_ir_op op;
  memset(&op, 0, sizeof op);
  op.code = code;
  op.name = xrt_opcode_name(code);
  op.loc = b->op.loc;
  op.num_operands = 2;
  op.operands = ops;
  op.num_results = 1;
  op.results = res;
  xrt__push_op(p, &op);
  memset(&op, 0, sizeof op);
  op.code = XRT_OP_RETURN;
  op.name = xrt_opcode_name(XRT_OP_RETURN);
  op.loc = b->op.loc;
  op.num_operands = 1;
  op.operands = res;
  xrt__push_op(p, &op);
  xrt_ir_region g = xrt__rgn_end(p, &r);
  xrt__push_region(p, &g);
}

/* reducer(%a: T, %c: T) (%b: T, %d: T) { ... }: args are all first-of-pair
 * values, then all second-of-pair values. */
static void xrt__reduce_reducer(xrt__parser *p, int32_t npairs) {
  size_t nmark = p->names.n, tmark = p->tys.n;
  xrt__expect_kw(p, "reducer");
  for (int32_t i = 0; i < npairs; i++) {
    xrt__expect(p, '(');
    for (int k = 0; k < 2; k++) {
      if (k) xrt__expect(p, ',');
      xrt_ir_type t;
      xrt__name nm;
      xrt__parse_arg(p, &nm, &t);
      *(xrt__name *)xrt__push_raw(p, &p->names) = nm;
      *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = t;
    }
    xrt__expect(p, ')');
  }
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  for (int k = 0; k < 2; k++)
    for (int32_t i = 0; i < npairs; i++) {
      size_t j = (size_t)(2 * i + k);
      xrt_ir_type t = XRT__VAT(p->tys, xrt_ir_type, tmark + j);
      xrt__rgn_arg(p, XRT__VAT(p->names, xrt__name, nmark + j), &t);
    }
  xrt__parse_block(p, &r, false);
  xrt_ir_region g = xrt__rgn_end(p, &r);
  xrt__push_region(p, &g);
  p->names.n = nmark;
  p->tys.n = tmark;
}

/* reduce(%x init: %i), ... [applies OP] across dimensions = [..] : type
 * [reducer(...) {...}] */
static void xrt__pretty_reduce(xrt__parser *p, xrt__opb *b) {
  size_t imark = p->i64s.n; /* inits: (value id, offset of its use) */
  int32_t npairs = 0;
  do {
    xrt__expect(p, '(');
    xrt__p_operand(p);
    xrt__expect_kw(p, "init");
    xrt__expect(p, ':');
    xrt__ws(p);
    *(int64_t *)xrt__push_raw(p, &p->i64s) = p->p - p->beg;
    *(int64_t *)xrt__push_raw(p, &p->i64s) = xrt__parse_use(p);
    xrt__expect(p, ')');
    npairs++;
  } while (xrt__eat(p, ','));
  for (int32_t i = 0; i < npairs; i++) {
    int64_t *init = &XRT__VAT(p->i64s, int64_t, imark + 2 * (size_t)i);
    xrt__push_operand_at(p, (int32_t)init[1], p->beg + init[0]);
  }
  int32_t init0 = (int32_t)XRT__VAT(p->i64s, int64_t, imark + 1);
  p->i64s.n = imark;
  xrt_opcode applies = XRT_OP_INVALID;
  if (xrt__eat_kw(p, "applies")) {
    xrt__ws(p);
    const char *at = p->p;
    xrt__tok t = xrt__ident(p);
    applies = xrt__opcode_from_name(t.s, t.n);
    if (applies == XRT_OP_INVALID)
      xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown op '%.*s'", (int)t.n, t.s);
    if (npairs != 1)
      xrt__perr(p, at, XRT_UNIMPLEMENTED, "'applies' with %d inputs", (int)npairs);
  }
  xrt__expect_kw(p, "across");
  xrt__expect_kw(p, "dimensions");
  xrt__expect(p, '=');
  xrt_ir_attr a;
  xrt__parse_attr(p, &a, false);
  xrt__add_attr(p, "dimensions", &a);
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
  if (applies != XRT_OP_INVALID) xrt__reduce_applies(p, b, applies, init0);
  else xrt__reduce_reducer(p, npairs);
}

/* chlo.scan(%in, ...) inits(%init, ...) dimension = N [attributes {..}]
 * {^bb0(...): ...} : (T, ...) -> (T, ...): the generic form's operands
 * (inputs, then inits), region and attributes, plus operandSegmentSizes
 * = [inputs, inits] as the generic form states it. */
static void xrt__pretty_scan(xrt__parser *p, xrt__opb *b) {
  xrt__paren_operands(p);
  size_t ni = p->ints.n - b->operands_mark;
  xrt__expect_kw(p, "inits");
  xrt__paren_operands(p);
  size_t nc = p->ints.n - b->operands_mark - ni;
  xrt__expect_kw(p, "dimension");
  xrt__expect(p, '=');
  xrt__ws(p);
  const char *at = p->p;
  xrt_ir_attr a;
  xrt__parse_attr(p, &a, false);
  if (a.kind != XRT_ATTR_INT)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "expected an integer dimension");
  xrt__add_attr(p, "dimension", &a);
  if (xrt__eat_kw(p, "attributes")) {
    xrt__expect(p, '{');
    xrt__parse_dict_entries(p, '}');
  }
  if (xrt__peek(p) != '{') xrt__expected(p, "'{'");
  xrt__parse_region(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
  size_t mark = p->i64s.n;
  *(int64_t *)xrt__push_raw(p, &p->i64s) = (int64_t)ni;
  *(int64_t *)xrt__push_raw(p, &p->i64s) = (int64_t)nc;
  xrt__add_ints(p, "operandSegmentSizes", mark, 2);
  p->i64s.n = mark;
}

/* An op name's opcode; create_token is after_all with no inputs (the
 * spec's replacement for it). */
static xrt_opcode xrt__p_opcode(xrt__tok t) {
  if (xrt__tok_is(t, "stablehlo.create_token")) return XRT_OP_AFTER_ALL;
  return xrt__opcode_from_name(t.s, t.n);
}

static void xrt__parse_pretty(xrt__parser *p, xrt__opb *b) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__tok t = xrt__ident(p);
  if (!t.n) xrt__expected(p, "an op");
  bool is_const = false;
  xrt_opcode code;
  if (xrt__tok_is(t, "return")) code = XRT_OP_FUNC_RETURN;
  else if (xrt__tok_is(t, "call")) code = XRT_OP_FUNC_CALL;
  else if ((b->check = xrt__p_check_kind(t, &is_const)) != 0) code = XRT_OP_CUSTOM_CALL;
  else code = xrt__p_opcode(t);
  if (code == XRT_OP_INVALID)
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown op '%.*s'", (int)t.n, t.s);
  b->op.code = code;
  b->op.name = xrt_opcode_name(code);
  if (b->check) {
    if (is_const) xrt__pretty_check_const(p, b);
    else xrt__pretty_common(p, b);
    xrt__check_finish(p, b);
    return;
  }
  switch (code) {
  case XRT_OP_CONSTANT:
    if (xrt__peek(p) == '(') xrt__pretty_constant_fn(p, b);
    else xrt__pretty_constant(p);
    break;
  case XRT_OP_OPTIMIZATION_BARRIER: /* attr-dict first; `()` if no operands */
    xrt__opt_attr_dict(p);
    if (xrt__peek(p) == '(') xrt__paren_operands(p);
    else xrt__pretty_common(p, b);
    break;
  case XRT_OP_FUNC_CALL:
  case XRT_OP_CUSTOM_CALL: xrt__pretty_call(p, b); break;
  case XRT_OP_WHILE: xrt__pretty_while(p, b); break;
  case XRT_OP_CHLO_SCAN: xrt__pretty_scan(p, b); break;
  case XRT_OP_REDUCE:
    if (xrt__peek(p) == '(') {
      xrt__pretty_reduce(p, b);
      break;
    }
    /* fall through */
  default: xrt__pretty_common(p, b); break;
  }
}

/* "name"(operands) [<{props}>] [(regions)] [{attrs}] : (T) -> T */
static void xrt__parse_generic(xrt__parser *p, xrt__opb *b) {
  xrt__ws(p);
  const char *at = p->p;
  xrt__tok t = xrt__string_raw(p);
  bool is_const = false;
  xrt_opcode code;
  if ((b->check = xrt__p_check_kind(t, &is_const)) != 0) code = XRT_OP_CUSTOM_CALL;
  else code = xrt__p_opcode(t);
  if (code == XRT_OP_INVALID)
    xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown op '%.*s'", (int)t.n, t.s);
  b->op.code = code;
  b->op.name = xrt_opcode_name(code);
  xrt__paren_operands(p);
  if (xrt__peek(p) == '[')
    xrt__perr(p, p->p, XRT_UNIMPLEMENTED, "successor blocks");
  if (xrt__peek(p) == '<' && xrt__peek2(p) == '{') {
    p->p += 2;
    xrt__parse_dict_entries(p, '}');
    xrt__expect(p, '>');
  }
  if (xrt__eat(p, '(')) {
    do xrt__parse_region(p);
    while (xrt__eat(p, ','));
    xrt__expect(p, ')');
  }
  xrt__opt_attr_dict(p);
  xrt__expect(p, ':');
  xrt__parse_fn_type(p, b);
  xrt_ir_attr *v = xrt__find_attr(p, b, "value");
  if (v && v->lit && (is_const || code == XRT_OP_CONSTANT))
    v->kind = XRT_ATTR_DENSE; /* a tensor value, not a list of ints */
  if (is_const) {
    if (!v || v->kind != XRT_ATTR_DENSE)
      xrt__perr(p, at, XRT_INVALID_ARGUMENT, "check op needs a dense 'value'");
    xrt__check_const_operand(p, b, v->lit);
  }
  if (b->check) xrt__check_finish(p, b);
}

/* `%a, %b:2 =` before an op; returns the number of results declared. */
static int32_t xrt__parse_result_names(xrt__parser *p) {
  if (xrt__peek(p) != '%') return 0;
  int32_t total = 0;
  do {
    xrt__expect(p, '%');
    xrt__tok t = xrt__suffix_name(p);
    int64_t count = 1;
    if (xrt__eat(p, ':')) {
      xrt__ws(p);
      const char *at = p->p;
      count = xrt__parse_i64(p);
      if (count < 1 || count > (1 << 20))
        xrt__perr(p, at, XRT_INVALID_ARGUMENT, "bad result count");
    }
    xrt__name *nm = xrt__push(p, &p->names);
    nm->s = t.s;
    nm->n = (uint32_t)t.n;
    nm->count = (int32_t)count;
    total += (int32_t)count;
    if (total > (1 << 20)) xrt__perr(p, t.s, XRT_INVALID_ARGUMENT, "too many results");
  } while (xrt__eat(p, ','));
  xrt__expect(p, '=');
  return total;
}

static void xrt__parse_op(xrt__parser *p) {
  xrt__opb b;
  memset(&b, 0, sizeof b);
  b.op.callee = -1;
  b.names_mark = p->names.n;
  b.num_names = xrt__parse_result_names(p);
  xrt__ws(p);
  b.at = p->p; /* the op name, as MLIR locates ops */
  xrt__loc_of(p, b.at, &b.op.loc.line, &b.op.loc.col);
  b.op.loc.file = p->file;
  b.operands_mark = p->ints.n;
  b.attrs_mark = p->attrs.n;
  b.regions_mark = p->regions.n;
  b.rtypes_mark = p->tys.n;
  if (xrt__peek(p) == '"') xrt__parse_generic(p, &b);
  else xrt__parse_pretty(p, &b);
  xrt__skip_loc(p);
  xrt__finish_op(p, &b);
}

/* ---------------------------------------------------------------------
 * Functions and the module
 * ------------------------------------------------------------------- */

/* `(%a: T {attrs} loc(..), ...)` as the body's block arguments. */
static void xrt__parse_func_args(xrt__parser *p) {
  xrt__expect(p, '(');
  if (xrt__eat(p, ')')) return;
  do {
    xrt__name nm;
    xrt_ir_type t;
    xrt__parse_arg(p, &nm, &t);
    size_t am = p->attrs.n;
    xrt__opt_attr_dict(p);
    p->attrs.n = am;
    xrt__skip_loc(p);
    xrt__rgn_arg(p, nm, &t);
  } while (xrt__eat(p, ','));
  xrt__expect(p, ')');
}

/* `-> T` or `-> (T {attrs}, ...)` onto p->tys; returns the count. */
static int32_t xrt__parse_func_results(xrt__parser *p) {
  size_t mark = p->tys.n;
  if (!xrt__eat_arrow(p)) return 0;
  bool paren = xrt__eat(p, '(');
  if (!paren || !xrt__eat(p, ')')) {
    do {
      xrt_ir_type t;
      xrt__parse_type(p, &t);
      *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = t;
      size_t am = p->attrs.n;
      if (paren) xrt__opt_attr_dict(p);
      p->attrs.n = am;
      xrt__skip_loc(p);
    } while (paren && xrt__eat(p, ','));
    if (paren) xrt__expect(p, ')');
  }
  return (int32_t)(p->tys.n - mark);
}

/* Records a parsed function with the values of its body. */
static void xrt__func_add(xrt__parser *p, xrt_ir_func *f, const char *name,
                          size_t name_n) {
  size_t n = p->vtypes.n;
  xrt_ir_type *vt = n ? xrt__p_alloc(p, n * sizeof *vt) : NULL;
  for (size_t i = 0; i < n; i++) vt[i] = *xrt__value_type(p, (int32_t)i);
  f->num_values = (int32_t)n;
  f->value_types = vt;
  xrt__sym_add(p, &p->funcs, name, name_n, (int32_t)p->fns.n, 1);
  *(xrt_ir_func *)xrt__push_raw(p, &p->fns) = *f;
}

/* Properties of a generic func.func. */
typedef struct xrt__gfunc {
  const char *name, *name_at; /* sym_name, where its value was written */
  size_t name_n;
  bool is_public;             /* sym_visibility is not "private" */
  bool have_type;             /* function_type seen: */
  size_t tmark;               /* its inputs, then results, on p->tys */
  int32_t nin, nres;
} xrt__gfunc;

/* `name = value, ...}` of a generic func.func's properties or attributes
 * (the opening brace consumed).  function_type is parsed here since a
 * function type is no attribute value; arg_attrs, res_attrs and others are
 * parsed and ignored. */
static void xrt__gfunc_props(xrt__parser *p, xrt__gfunc *g) {
  if (xrt__eat(p, '}')) return;
  do {
    xrt__ws(p);
    const char *kat = p->p;
    xrt__tok k = xrt__peek(p) == '"' ? xrt__string_raw(p) : xrt__ident(p);
    if (!k.n) xrt__expected(p, "an attribute name");
    if (xrt__tok_is(k, "function_type")) {
      if (g->have_type)
        xrt__perr(p, kat, XRT_INVALID_ARGUMENT, "duplicate function_type");
      xrt__expect(p, '=');
      g->tmark = p->tys.n;
      g->nin = xrt__parse_types(p, true);
      if (!xrt__eat_arrow(p)) xrt__expected(p, "'->'");
      if (xrt__peek(p) == '(') {
        g->nres = xrt__parse_types(p, true);
      } else { /* one type: a ',' here ends the attribute */
        xrt_ir_type t;
        xrt__parse_type(p, &t);
        *(xrt_ir_type *)xrt__push_raw(p, &p->tys) = t;
        g->nres = 1;
      }
      g->have_type = true;
      continue;
    }
    xrt_ir_attr a;
    memset(&a, 0, sizeof a);
    xrt__ws(p);
    const char *vat = p->p;
    if (xrt__eat(p, '=')) {
      xrt__ws(p);
      vat = p->p;
      xrt__parse_attr(p, &a, true);
    }
    bool name = xrt__tok_is(k, "sym_name"), vis = xrt__tok_is(k, "sym_visibility");
    if ((name || vis) && a.kind != XRT_ATTR_STRING)
      xrt__perr(p, vat, XRT_INVALID_ARGUMENT, "expected a string");
    if (name) g->name = a.s, g->name_n = (size_t)a.n, g->name_at = vat;
    if (vis) g->is_public = strcmp(a.s, "private") != 0;
  } while (xrt__eat(p, ','));
  xrt__expect(p, '}');
}

/* `: () -> ()` of generic module and function ops. */
static void xrt__expect_unit_fn_type(xrt__parser *p) {
  xrt__expect(p, ':');
  xrt__expect(p, '(');
  xrt__expect(p, ')');
  if (!xrt__eat_arrow(p)) xrt__expected(p, "'->'");
  xrt__expect(p, '(');
  xrt__expect(p, ')');
}

static void xrt__parse_func(xrt__parser *p) {
  xrt__ws(p);
  const char *at = p->p;
  xrt_ir_func f;
  memset(&f, 0, sizeof f);
  xrt__loc_of(p, at, &f.loc.line, &f.loc.col);
  f.loc.file = p->file;
  xrt__expect_kw(p, "func.func");
  f.is_public = !xrt__eat_kw(p, "private");
  if (f.is_public && !xrt__eat_kw(p, "public")) xrt__eat_kw(p, "nested");
  xrt__ws(p);
  const char *nat = p->p;
  xrt__expect(p, '@');
  xrt__tok name;
  if (xrt__peek(p) == '"') name = xrt__string_raw(p);
  else name = xrt__suffix_name(p);
  f.name = xrt__strdup(p, name.s, name.n);
  if (xrt__sym_find(&p->funcs, name.s, name.n))
    xrt__perr(p, nat, XRT_INVALID_ARGUMENT, "redefinition of function @%.*s",
              (int)name.n, name.s);
  xrt__sym_pop(&p->vals, 0);
  p->vtypes.n = 0;
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  xrt__parse_func_args(p);
  size_t tmark = p->tys.n;
  f.num_results = xrt__parse_func_results(p);
  f.result_types = xrt__vcopy(p, &p->tys, tmark);
  p->tys.n = tmark;
  if (xrt__eat_kw(p, "attributes")) {
    size_t am = p->attrs.n;
    xrt__expect(p, '{');
    xrt__parse_dict_entries(p, '}');
    p->attrs.n = am;
  }
  if (xrt__peek(p) == '{') xrt__parse_block(p, &r, true);
  f.body = xrt__rgn_end(p, &r);
  xrt__skip_loc(p);
  xrt__func_add(p, &f, name.s, name.n);
}

/* Checks the generic func's entry block arguments against its function
 * type (inputs at tys[g->tmark..]); an empty body (a declaration) gets
 * unnamed arguments of those types. */
static void xrt__gfunc_args(xrt__parser *p, const xrt__rgn *r,
                            const xrt__gfunc *g, const char *body_at) {
  int32_t nargs = (int32_t)(p->ints.n - r->args_mark);
  if (nargs == 0 && p->ops.n == r->ops_mark) {
    xrt__name none = {NULL, 0, 1};
    for (int32_t i = 0; i < g->nin; i++) {
      xrt_ir_type t = XRT__VAT(p->tys, xrt_ir_type, g->tmark + (size_t)i);
      xrt__rgn_arg(p, none, &t);
    }
    return;
  }
  if (nargs != g->nin)
    xrt__perr(p, body_at, XRT_INVALID_ARGUMENT,
              "entry block has %d arguments but the function type has %d",
              (int)nargs, (int)g->nin);
  for (int32_t i = 0; i < nargs; i++) {
    size_t k = r->args_mark + (size_t)i;
    const xrt_ir_type *have = xrt__value_type(p, XRT__VAT(p->ints, int32_t, k));
    const xrt_ir_type *in = &XRT__VAT(p->tys, xrt_ir_type, g->tmark + (size_t)i);
    if (xrt__p_type_eq(have, in)) continue;
    const char *at = XRT__VAT(p->uses, const char *, k);
    char want[160], got[160];
    size_t nw = 0, ng = 0;
    xrt__p_type_fmt(in, want, sizeof want, &nw);
    xrt__p_type_fmt(have, got, sizeof got, &ng);
    xrt__perr(p, at, XRT_INVALID_ARGUMENT,
              "entry block argument '%.*s' has type %s but the function type "
              "says %s",
              (int)(xrt__use_end(p, at) - at), at, got, want);
  }
}

/* `"func.func"() <{function_type = (T) -> T, sym_name = "f", ...}>
 * ({^bb0(%a: T): ...}) : () -> ()`, the properties possibly in a `{...}`
 * dictionary after the region instead; at is the opening quote. */
static void xrt__parse_generic_func(xrt__parser *p, const char *at) {
  xrt_ir_func f;
  xrt__gfunc g;
  memset(&f, 0, sizeof f);
  memset(&g, 0, sizeof g);
  xrt__loc_of(p, at, &f.loc.line, &f.loc.col);
  f.loc.file = p->file;
  g.is_public = true;
  xrt__expect(p, '(');
  xrt__expect(p, ')');
  xrt__sym_pop(&p->vals, 0);
  p->vtypes.n = 0;
  size_t tm = p->tys.n;
  if (xrt__peek(p) == '<' && xrt__peek2(p) == '{') {
    p->p += 2;
    xrt__gfunc_props(p, &g);
    xrt__expect(p, '>');
  }
  xrt__rgn r;
  xrt__rgn_begin(p, &r);
  xrt__expect(p, '(');
  xrt__ws(p);
  const char *brace = p->p, *body_at = brace; /* the block label, if any */
  if (xrt__eat(p, '{') && xrt__peek(p) == '^') body_at = p->p;
  p->p = brace;
  xrt__parse_block(p, &r, true);
  xrt__expect(p, ')');
  if (xrt__eat(p, '{')) xrt__gfunc_props(p, &g);
  xrt__expect_unit_fn_type(p);
  if (!g.have_type)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "func.func without a function_type");
  if (!g.name)
    xrt__perr(p, at, XRT_INVALID_ARGUMENT, "func.func without a sym_name");
  xrt__gfunc_args(p, &r, &g, body_at);
  f.name = g.name;
  f.is_public = g.is_public;
  f.num_results = g.nres;
  f.result_types = xrt__vcopy(p, &p->tys, g.tmark + (size_t)g.nin);
  f.body = xrt__rgn_end(p, &r);
  p->tys.n = tm;
  xrt__skip_loc(p);
  if (xrt__sym_find(&p->funcs, g.name, g.name_n))
    xrt__perr(p, g.name_at, XRT_INVALID_ARGUMENT,
              "redefinition of function @%s", g.name);
  xrt__func_add(p, &f, g.name, g.name_n);
}

/* Sets op.callee of every func.call in a region (callees may be defined
 * after the caller). */
static void xrt__resolve_calls(xrt__parser *p, const xrt_ir_region *g) {
  for (int32_t i = 0; i < g->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&g->ops[i];
    for (int32_t k = 0; k < op->num_regions; k++) xrt__resolve_calls(p, &op->regions[k]);
    if (op->code != XRT_OP_FUNC_CALL) continue;
    const xrt_ir_attr *a = xrt_ir_op_attr(op, "callee");
    if (!a || a->kind != XRT_ATTR_SYMBOL)
      xrt__perr_loc(p, op->loc, XRT_INVALID_ARGUMENT, "func.call without a callee");
    xrt__sym *s = xrt__sym_find(&p->funcs, a->s, (size_t)a->n);
    if (!s)
      xrt__perr_loc(p, op->loc, XRT_INVALID_ARGUMENT, "call to unknown function @%s", a->s);
    op->callee = s->id;
  }
}

/* `#alias = value` and `!alias = type` at the top level: ignored. */
static void xrt__skip_alias(xrt__parser *p) {
  p->p++;
  xrt__suffix_name(p);
  xrt__expect(p, '=');
  if (xrt__peek_kw(p, "loc")) {
    xrt__skip_loc(p);
  } else {
    xrt_ir_attr a;
    size_t am = p->attrs.n;
    xrt__parse_attr(p, &a, true);
    p->attrs.n = am;
  }
}

static void xrt__parse_items(xrt__parser *p, xrt_ir_module *m, int close);

/* The StableHLO version the parser implements (xrt_stablehlo_version). */
#define XRT__STABLEHLO_VERSION "1.8.0"

static bool xrt__version_parse(const char *s, int v[3]);

/* The value of the module attribute stablehlo.version ("X.Y.Z"); a
 * malformed one is an error at the attribute (searched for from at, the
 * start of the attribute dictionary). */
static const char *xrt__module_version(xrt__parser *p, const char *at,
                                       const xrt_ir_attr *a) {
  int v[3];
  if (a->kind == XRT_ATTR_STRING && xrt__version_parse(a->s, v)) return a->s;
  static const char key[] = "stablehlo.version";
  for (const char *q = at; q + sizeof key - 1 <= p->p; q++)
    if (!memcmp(q, key, sizeof key - 1)) {
      at = q;
      break;
    }
  xrt__perr(p, at, XRT_INVALID_ARGUMENT, "stablehlo.version must be a string "
            "\"MAJOR.MINOR.PATCH\" (like \"%s\"), got %s%s%s",
            XRT__STABLEHLO_VERSION, a->kind == XRT_ATTR_STRING ? "\"" : "",
            a->kind == XRT_ATTR_STRING ? a->s : "another kind of attribute",
            a->kind == XRT_ATTR_STRING ? "\"" : "");
}

/* Module attributes `k = v, ...}` (the opening brace consumed). */
static void xrt__module_attrs(xrt__parser *p, xrt_ir_module *m) {
  size_t am = p->attrs.n;
  const char *at = p->p;
  xrt__parse_dict_entries(p, '}');
  for (size_t i = am; i < p->attrs.n; i++) {
    const xrt_ir_attr *a = &XRT__VAT(p->attrs, xrt_ir_attr, i);
    if (a->kind == XRT_ATTR_STRING && !strcmp(a->name, "sym_name")) m->name = a->s;
    if (!strcmp(a->name, "stablehlo.version"))
      m->stablehlo_version = xrt__module_version(p, at, a);
    if (a->kind != XRT_ATTR_INT) continue;
    if (!strcmp(a->name, "mhlo.num_replicas")) m->num_replicas = (int32_t)a->i;
    if (!strcmp(a->name, "mhlo.num_partitions")) m->num_partitions = (int32_t)a->i;
  }
  p->attrs.n = am;
}

/* module [@name] [attributes {...}] { ... } */
static void xrt__parse_module_header(xrt__parser *p, xrt_ir_module *m) {
  if (xrt__eat(p, '@')) {
    xrt__tok t = xrt__peek(p) == '"' ? xrt__string_raw(p) : xrt__suffix_name(p);
    m->name = xrt__strdup(p, t.s, t.n);
  }
  if (!xrt__eat_kw(p, "attributes")) return;
  xrt__expect(p, '{');
  xrt__module_attrs(p, m);
}

/* "builtin.module"() [<{sym_name = "m"}>] ({ items }) [{attrs}] : () -> ()
 * after the name. */
static void xrt__parse_generic_module(xrt__parser *p, xrt_ir_module *m) {
  xrt__expect(p, '(');
  xrt__expect(p, ')');
  if (xrt__peek(p) == '<' && xrt__peek2(p) == '{') {
    p->p += 2;
    xrt__module_attrs(p, m);
    xrt__expect(p, '>');
  }
  xrt__expect(p, '(');
  xrt__expect(p, '{');
  if (xrt__peek(p) == '^') { /* ^bb0: */
    p->p++;
    xrt__suffix_name(p);
    xrt__expect(p, ':');
  }
  xrt__parse_items(p, m, '}');
  p->p++;
  xrt__expect(p, ')');
  if (xrt__eat(p, '{')) xrt__module_attrs(p, m);
  xrt__expect_unit_fn_type(p);
  xrt__skip_loc(p);
}

/* Top-level items until `close` (-1: end of input, '}': module body). */
static void xrt__parse_items(xrt__parser *p, xrt_ir_module *m, int close) {
  for (;;) {
    int c = xrt__peek(p);
    if (c == close) return;
    if (c < 0) xrt__expected(p, "'}'");
    if (c == '#' || c == '!') {
      xrt__skip_alias(p);
    } else if (xrt__peek_kw(p, "func.func")) {
      xrt__parse_func(p);
    } else if (close < 0 && (xrt__eat_kw(p, "module") ||
                             xrt__eat_kw(p, "builtin.module"))) {
      xrt__parse_module_header(p, m);
      xrt__expect(p, '{');
      xrt__parse_items(p, m, '}');
      p->p++;
      xrt__skip_loc(p);
    } else {
      const char *at = p->p;
      xrt__tok t = xrt__ident(p);
      if (!t.n && c == '"') {
        t = xrt__string_raw(p);
        if (xrt__tok_is(t, "func.func")) {
          xrt__parse_generic_func(p, at);
          continue;
        }
        if (close < 0 && xrt__tok_is(t, "builtin.module")) {
          xrt__parse_generic_module(p, m);
          continue;
        }
      }
      if (!t.n) xrt__expected(p, "'func.func' or 'module'");
      xrt__perr(p, at, XRT_UNIMPLEMENTED, "unknown op '%.*s'", (int)t.n, t.s);
    }
  }
}

static void xrt__parser_free(xrt__parser *p) {
  xrt__pvec *v[] = {&p->vals.syms, &p->funcs.syms, &p->vtypes, &p->utypes,
                    &p->ints, &p->uses, &p->i64s, &p->f64s, &p->tys,
                    &p->attrs, &p->ops, &p->regions, &p->names, &p->fns};
  const xrt_allocator *a = &p->arena->allocator;
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) xrt__free(a, v[i]->data);
  xrt__free(a, p->vals.buckets);
  xrt__free(a, p->utab);
  xrt__free(a, p->funcs.buckets);
}

static void xrt__parser_init(xrt__parser *p) {
  p->vals.syms.elem = p->funcs.syms.elem = sizeof(xrt__sym);
  p->utypes.elem = p->tys.elem = sizeof(xrt_ir_type);
  p->vtypes.elem = sizeof(int32_t);
  p->ints.elem = sizeof(int32_t);
  p->uses.elem = sizeof(const char *);
  p->i64s.elem = sizeof(int64_t);
  p->f64s.elem = sizeof(double);
  p->attrs.elem = sizeof(xrt_ir_attr);
  p->ops.elem = sizeof(xrt_ir_op);
  p->regions.elem = sizeof(xrt_ir_region);
  p->names.elem = sizeof(xrt__name);
  p->fns.elem = sizeof(xrt_ir_func);
}

/* Sizes the per-value scratch for the input up front: regrowing it by
 * doubling costs more than the parse itself on large functions. */
static void xrt__reserve(xrt__parser *p, xrt__pvec *v, size_t n) {
  if (n <= v->cap) return;
  char *d = xrt__realloc(&p->arena->allocator, v->data, v->n * v->elem,
                         n * v->elem);
  if (!d) xrt__oom(p);
  v->data = d;
  v->cap = n;
}

static void xrt__parse_all(xrt__parser *p, xrt_ir_module *m) {
  size_t guess = (size_t)(p->end - p->beg) / 48 + 64; /* ~one value a line */
  if (guess > (1u << 22)) guess = 1u << 22;
  xrt__reserve(p, &p->vtypes, guess);
  xrt__reserve(p, &p->vals.syms, guess);
  xrt__parse_items(p, m, -1);
  m->num_funcs = (int32_t)p->fns.n;
  m->funcs = xrt__vcopy(p, &p->fns, 0);
  for (int32_t i = 0; i < m->num_funcs; i++) xrt__resolve_calls(p, &m->funcs[i].body);
}

static xrt_status xrt__parse_module(xrt__arena *arena, const char *text,
                                    size_t len, const char *file,
                                    int line_offset, xrt_ir_module **out) {
  /* The parser's scratch comes from the arena's allocator (the client's,
   * for xrt_compile). */
  xrt__parser *p = xrt__calloc(&arena->allocator, 1, sizeof *p);
  if (!p) return xrt__nomem("the parser");
  xrt__parser_init(p);
  p->arena = arena;
  p->beg = p->p = p->lc_pos = p->lc_line_start = text ? text : "";
  p->end = p->beg + (text ? len : 0);
  p->lc_line = 1;
  p->file = file ? file : "<input>";
  p->line_offset = line_offset;
  xrt_ir_module *m = xrt__arena_alloc(arena, sizeof *m);
  xrt_status st = XRT_OK;
  if (!m) {
    st = xrt__nomem("the parsed module");
  } else if (setjmp(p->jb) == 0) {
    m->name = "";
    m->num_replicas = m->num_partitions = 1;
    m->stablehlo_version = XRT__STABLEHLO_VERSION;
    xrt__parse_all(p, m);
    *out = m;
  } else {
    st = p->status;
  }
  xrt__parser_free(p);
  xrt__free(&arena->allocator, p);
  return st;
}

/* ======================================================================
 * 5b. Normalize
 *
 * Some ops spell the same attributes differently in their pretty and generic
 * forms.  This pass rewrites them into one representation, the generic
 * attribute names of the StableHLO specification, so that the verifier and
 * every plugin read a single form:
 *  - convolution's compact `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`
 *    becomes a DICT "dimension_numbers" with INT/INTS fields
 *    input_batch_dimension, input_feature_dimension,
 *    input_spatial_dimensions, kernel_input_feature_dimension,
 *    kernel_output_feature_dimension, kernel_spatial_dimensions,
 *    output_batch_dimension, output_feature_dimension,
 *    output_spatial_dimensions;
 *  - the pretty `window = {stride, pad, lhs_dilate, rhs_dilate, reverse}`
 *    becomes window_strides, padding (flattened pairs), lhs_dilation,
 *    rhs_dilation and window_reversal.
 * ==================================================================== */

typedef struct xrt__nctx {
  xrt__arena *arena;
  const xrt_ir_op *op;
} xrt__nctx;

static xrt_status xrt__nfail(const xrt__nctx *n, const char *what) {
  const xrt_ir_loc *l = &n->op->loc;
  return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: %s", l->file,
                   (int)l->line, (int)l->col, n->op->name, what);
}

/* One bracketed group of the compact form: "[b, 0, 1, f]".  Letters are
 * given in `letters` (e.g. "bf"); their positions go to role[], digit k's
 * position to spatial[k]. */
static xrt_status xrt__conv_group(const xrt__nctx *n, const char **sp,
                                  const char *letters, int64_t role[2],
                                  int64_t *spatial, int64_t *nspatial) {
  const char *s = *sp;
  while (*s == ' ') s++;
  if (*s++ != '[') return xrt__nfail(n, "malformed dimension numbers");
  int64_t pos = 0, count = 0;
  role[0] = role[1] = -1;
  for (;;) {
    while (*s == ' ' || *s == ',') s++;
    if (*s == ']') break;
    if (*s >= '0' && *s <= '9') {
      int64_t k = 0;
      while (*s >= '0' && *s <= '9' && k < XRT_MAX_RANK) k = k * 10 + (*s++ - '0');
      if (k >= XRT_MAX_RANK) return xrt__nfail(n, "spatial dimension too large");
      spatial[k] = pos;
      if (k + 1 > count) count = k + 1;
    } else if (*s == letters[0] || *s == letters[1]) {
      role[*s == letters[1]] = pos;
      s++;
    } else {
      return xrt__nfail(n, "malformed dimension numbers");
    }
    if (++pos > XRT_MAX_RANK) return xrt__nfail(n, "too many dimensions");
  }
  *sp = s + 1;
  *nspatial = count;
  if (role[0] < 0 || role[1] < 0)
    return xrt__nfail(n, "dimension numbers lack a batch/feature letter");
  return XRT_OK;
}

static xrt_ir_attr xrt__int_attr(const char *name, int64_t v) {
  xrt_ir_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = XRT_ATTR_INT;
  a.i = v;
  return a;
}

static xrt_status xrt__ints_attr(const xrt__nctx *n, const char *name,
                                 const int64_t *v, int64_t count,
                                 xrt_ir_attr *a) {
  int64_t *copy = (int64_t *)xrt__arena_alloc(n->arena,
                                              sizeof(int64_t) * (size_t)(count + 1));
  if (!copy) return xrt__nomem("an integer list attribute");
  for (int64_t i = 0; i < count; i++) copy[i] = v[i];
  memset(a, 0, sizeof *a);
  a->name = name;
  a->kind = XRT_ATTR_INTS;
  a->ints = copy;
  a->n = count;
  return XRT_OK;
}

/* The compact conv form into a DICT of nine fields. */
static xrt_status xrt__conv_dims(const xrt__nctx *n, const char *s,
                                 xrt_ir_attr *out) {
  static const char *const names[3][3] = {
      {"input_batch_dimension", "input_feature_dimension",
       "input_spatial_dimensions"},
      {"kernel_input_feature_dimension", "kernel_output_feature_dimension",
       "kernel_spatial_dimensions"},
      {"output_batch_dimension", "output_feature_dimension",
       "output_spatial_dimensions"}};
  static const char *const letters[3] = {"bf", "io", "bf"};
  xrt_ir_attr *items = (xrt_ir_attr *)xrt__arena_alloc(n->arena,
                                                       9 * sizeof *items);
  if (!items) return xrt__nomem("a dimension-numbers attribute");
  for (int g = 0; g < 3; g++) {
    int64_t role[2], spatial[XRT_MAX_RANK] = {0}, ns = 0;
    if (g == 1 && (s[0] != 'x' || !s++))
      return xrt__nfail(n, "expected 'x' in dimension numbers");
    if (g == 2 && (s[0] != '-' || s[1] != '>' || !(s += 2)))
      return xrt__nfail(n, "expected '->' in dimension numbers");
    xrt_status st = xrt__conv_group(n, &s, letters[g], role, spatial, &ns);
    if (st) return st;
    items[3 * g] = xrt__int_attr(names[g][0], role[0]);
    items[3 * g + 1] = xrt__int_attr(names[g][1], role[1]);
    if ((st = xrt__ints_attr(n, names[g][2], spatial, ns, &items[3 * g + 2])))
      return st;
  }
  memset(out, 0, sizeof *out);
  out->name = "dimension_numbers";
  out->kind = XRT_ATTR_DICT;
  out->items = items;
  out->num_items = 9;
  return XRT_OK;
}

/* Maps a pretty window field to its generic attribute. */
static const char *xrt__window_name(const char *field) {
  static const char *const map[][2] = {
      {"stride", "window_strides"}, {"pad", "padding"},
      {"lhs_dilate", "lhs_dilation"}, {"rhs_dilate", "rhs_dilation"},
      {"reverse", "window_reversal"}};
  for (size_t i = 0; i < XRT__ARRAY_SIZE(map); i++)
    if (strcmp(field, map[i][0]) == 0) return map[i][1];
  return NULL;
}

/* [[lo, hi], ...] (a LIST of two-element INTS) into flat INTS. */
static xrt_status xrt__flatten_pairs(const xrt__nctx *n, const xrt_ir_attr *a,
                                     xrt_ir_attr *out) {
  int64_t v[2 * XRT_MAX_RANK];
  if (a->num_items > XRT_MAX_RANK) return xrt__nfail(n, "too many pads");
  for (int32_t i = 0; i < a->num_items; i++) {
    const xrt_ir_attr *p = &a->items[i];
    if (p->kind != XRT_ATTR_INTS || p->n != 2)
      return xrt__nfail(n, "pad entries must be [low, high] pairs");
    v[2 * i] = p->ints[0];
    v[2 * i + 1] = p->ints[1];
  }
  return xrt__ints_attr(n, a->name, v, 2 * (int64_t)a->num_items, out);
}

static xrt_status xrt__normalize_conv(xrt__nctx *n, xrt_ir_op *op) {
  int32_t extra = 0;
  for (int32_t i = 0; i < op->num_attrs; i++)
    if (op->attrs[i].kind == XRT_ATTR_DICT && op->attrs[i].name &&
        strcmp(op->attrs[i].name, "window") == 0)
      extra += op->attrs[i].num_items;
  xrt_ir_attr *attrs = (xrt_ir_attr *)xrt__arena_alloc(
      n->arena, sizeof *attrs * (size_t)(op->num_attrs + extra + 1));
  if (!attrs) return xrt__nomem("an op's normalized attributes");
  int32_t k = 0;
  for (int32_t i = 0; i < op->num_attrs; i++) {
    const xrt_ir_attr *a = &op->attrs[i];
    const char *name = a->name ? a->name : "";
    xrt_status st = XRT_OK;
    if (a->kind == XRT_ATTR_STRING && (strcmp(name, "dimension_numbers") == 0 ||
                                       strcmp(name, "dim_numbers") == 0)) {
      st = xrt__conv_dims(n, a->s, &attrs[k++]);
    } else if (a->kind == XRT_ATTR_DICT && strcmp(name, "window") == 0) {
      for (int32_t j = 0; j < a->num_items; j++) {
        const char *g = a->items[j].name ? xrt__window_name(a->items[j].name)
                                         : NULL;
        if (!g) return xrt__nfail(n, "unknown field in window");
        if (a->items[j].kind == XRT_ATTR_LIST) { /* pad = [[lo, hi], ...] */
          if ((st = xrt__flatten_pairs(n, &a->items[j], &attrs[k]))) return st;
        } else {
          attrs[k] = a->items[j];
        }
        attrs[k++].name = g;
      }
    } else {
      attrs[k++] = *a;
    }
    if (st) return st;
  }
  op->attrs = attrs;
  op->num_attrs = k;
  return XRT_OK;
}

static xrt_status xrt__normalize_region(xrt__nctx *n, const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&r->ops[i]; /* ours until shared */
    n->op = op;
    xrt_status s = XRT_OK;
    if (op->code == XRT_OP_CONVOLUTION || op->code == XRT_OP_DYNAMIC_CONV)
      s = xrt__normalize_conv(n, op);
    for (int32_t k = 0; !s && k < op->num_regions; k++)
      s = xrt__normalize_region(n, &op->regions[k]);
    if (s) return s;
  }
  return XRT_OK;
}

static xrt_status xrt__normalize_module(xrt__arena *arena, xrt_ir_module *m) {
  xrt__nctx n = {arena, NULL};
  for (int32_t i = 0; i < m->num_funcs; i++) {
    xrt_status s = xrt__normalize_region(&n, &m->funcs[i].body);
    if (s) return s;
  }
  return XRT_OK;
}

/* ======================================================================
 * 6. Verify
 *
 * The parser gives every value a type from the program's own annotations;
 * the verifier checks that each op's operands, results and attributes obey
 * the StableHLO specification's constraints, so a device plugin receives a
 * program it can trust.  Ops without checks here are left to the plugin.
 * ==================================================================== */

typedef struct xrt__vctx {
  const xrt_ir_module *module;
  const xrt_ir_func *func;
  const xrt_ir_op *op;
} xrt__vctx;

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
static xrt_status xrt__vfail(const xrt__vctx *v, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const xrt_ir_loc *l = &v->op->loc;
  return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: %s",
                   l->file ? l->file : "<input>", (int)l->line, (int)l->col,
                   v->op->name ? v->op->name : xrt_opcode_name(v->op->code),
                   msg);
}

static const xrt_ir_type *xrt__vtype(const xrt__vctx *v, int32_t id) {
  return &v->func->value_types[id];
}
static const xrt_shape *xrt__vshape(const xrt__vctx *v, int32_t id) {
  return &v->func->value_types[id].shape;
}
static const xrt_shape *xrt__operand(const xrt__vctx *v, int i) {
  return xrt__vshape(v, v->op->operands[i]);
}
static const xrt_shape *xrt__result(const xrt__vctx *v, int i) {
  return xrt__vshape(v, v->op->results[i]);
}

static void xrt__type_str(const xrt_ir_type *t, char *buf, size_t cap) {
  if (t->kind == XRT_TYPE_TOKEN) snprintf(buf, cap, "!stablehlo.token");
  else if (t->kind == XRT_TYPE_TUPLE) snprintf(buf, cap, "tuple<...>");
  else xrt_shape_format(&t->shape, buf, cap);
}

static bool xrt__type_equal(const xrt_ir_type *a, const xrt_ir_type *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == XRT_TYPE_TOKEN) return true;
  if (a->kind == XRT_TYPE_TUPLE) {
    if (a->num_elems != b->num_elems) return false;
    for (int32_t i = 0; i < a->num_elems; i++)
      if (!xrt__type_equal(&a->elems[i], &b->elems[i])) return false;
    return true;
  }
  return xrt__shape_equal(&a->shape, &b->shape) && !a->quant == !b->quant;
}

static xrt_status xrt__vcounts(const xrt__vctx *v, int operands, int results) {
  if (operands >= 0 && v->op->num_operands != operands)
    return xrt__vfail(v, "expects %d operand(s), got %d", operands,
                      (int)v->op->num_operands);
  if (results >= 0 && v->op->num_results != results)
    return xrt__vfail(v, "expects %d result(s), got %d", results,
                      (int)v->op->num_results);
  for (int i = 0; i < v->op->num_operands; i++)
    if (xrt__vtype(v, v->op->operands[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "operand %d must be a tensor", i);
  for (int i = 0; i < v->op->num_results; i++)
    if (xrt__vtype(v, v->op->results[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "result %d must be a tensor", i);
  return XRT_OK;
}

/* Two types must be equal; `what` names them in the message. */
static xrt_status xrt__vsame(const xrt__vctx *v, int32_t a, int32_t b,
                             const char *what) {
  const xrt_ir_type *ta = xrt__vtype(v, a), *tb = xrt__vtype(v, b);
  if (xrt__type_equal(ta, tb)) return XRT_OK;
  char sa[160], sb[160];
  xrt__type_str(ta, sa, sizeof sa);
  xrt__type_str(tb, sb, sizeof sb);
  return xrt__vfail(v, "%s: %s vs %s", what, sa, sb);
}

static bool xrt__same_dims(const xrt_shape *a, const xrt_shape *b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* Element-type classes an op accepts, as a bit mask of XRT__K_*. */
#define XRT__M(k) (1u << (k))
#define XRT__M_INT (XRT__M(XRT__K_SINT) | XRT__M(XRT__K_UINT))
#define XRT__M_FC (XRT__M(XRT__K_FLOAT) | XRT__M(XRT__K_COMPLEX))
#define XRT__M_NUM (XRT__M_INT | XRT__M_FC)
#define XRT__M_ALL (XRT__M_NUM | XRT__M(XRT__K_PRED))
#define XRT__M_LOGIC (XRT__M_INT | XRT__M(XRT__K_PRED))

static unsigned xrt__elementwise_mask(xrt_opcode code) {
  switch (code) {
  case XRT_OP_ADD: case XRT_OP_MULTIPLY: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: return XRT__M_ALL;
  case XRT_OP_SUBTRACT: case XRT_OP_DIVIDE: case XRT_OP_POWER:
  case XRT_OP_NEGATE: return XRT__M_NUM;
  case XRT_OP_REMAINDER: case XRT_OP_SIGN: case XRT_OP_ABS:
    return XRT__M_NUM;
  case XRT_OP_AND: case XRT_OP_OR: case XRT_OP_XOR: case XRT_OP_NOT:
    return XRT__M_LOGIC;
  case XRT_OP_SHIFT_LEFT: case XRT_OP_SHIFT_RIGHT_ARITHMETIC:
  case XRT_OP_SHIFT_RIGHT_LOGICAL: case XRT_OP_POPCNT:
  case XRT_OP_COUNT_LEADING_ZEROS: return XRT__M_INT;
  case XRT_OP_EXPONENTIAL: case XRT_OP_LOG: case XRT_OP_SQRT:
  case XRT_OP_RSQRT: case XRT_OP_TANH: case XRT_OP_LOGISTIC:
  case XRT_OP_SINE: case XRT_OP_COSINE: case XRT_OP_EXPONENTIAL_MINUS_ONE:
  case XRT_OP_LOG_PLUS_ONE: case XRT_OP_CBRT: case XRT_OP_TAN:
  case XRT_OP_ATAN2: return XRT__M_FC;
  case XRT_OP_FLOOR: case XRT_OP_CEIL: case XRT_OP_ROUND_NEAREST_AFZ:
  case XRT_OP_ROUND_NEAREST_EVEN: return XRT__M(XRT__K_FLOAT);
  default: return 0;
  }
}

static bool xrt__is_binary_elementwise(xrt_opcode c) {
  switch (c) {
  case XRT_OP_ADD: case XRT_OP_SUBTRACT: case XRT_OP_MULTIPLY:
  case XRT_OP_DIVIDE: case XRT_OP_REMAINDER: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: case XRT_OP_POWER: case XRT_OP_AND: case XRT_OP_OR:
  case XRT_OP_XOR: case XRT_OP_SHIFT_LEFT: case XRT_OP_SHIFT_RIGHT_ARITHMETIC:
  case XRT_OP_SHIFT_RIGHT_LOGICAL: case XRT_OP_ATAN2: return true;
  default: return false;
  }
}

static xrt_status xrt__vclass(const xrt__vctx *v, unsigned mask) {
  xrt_dtype t = xrt__operand(v, 0)->dtype;
  if (xrt__vtype(v, v->op->operands[0])->quant) return XRT_OK; /* #3 */
  if (mask & XRT__M(xrt__dtype_class(t))) return XRT_OK;
  return xrt__vfail(v, "element type %s is not allowed", xrt_dtype_name(t));
}

static xrt_status xrt__verify_elementwise(const xrt__vctx *v) {
  bool binary = xrt__is_binary_elementwise(v->op->code);
  xrt_status s = xrt__vcounts(v, binary ? 2 : 1, 1);
  if (s) return s;
  if (binary && (s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                                "operand types differ")))
    return s;
  if ((s = xrt__vclass(v, xrt__elementwise_mask(v->op->code)))) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (v->op->code == XRT_OP_ABS && xrt_dtype_is_complex(in->dtype)) {
    xrt_dtype real = in->dtype == XRT_C64 ? XRT_F32 : XRT_F64;
    if (out->dtype != real || !xrt__same_dims(in, out))
      return xrt__vfail(v, "result of abs of a complex tensor must be its "
                           "real counterpart");
    return XRT_OK;
  }
  return xrt__vsame(v, v->op->operands[0], v->op->results[0],
                    "result type differs from operand type");
}

static const xrt_ir_attr *xrt__vattr(const xrt__vctx *v, const char *name,
                                     int kind) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  if (a && kind >= 0 && a->kind != kind) return NULL;
  return a;
}

/* An INTS attribute: returns it, or fails with a message. An absent
 * attribute counts as empty when allow_missing is set. */
static xrt_status xrt__vints(const xrt__vctx *v, const char *name,
                             bool allow_missing, const int64_t **ints,
                             int64_t *n) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  if (!a) {
    if (!allow_missing) return xrt__vfail(v, "missing attribute '%s'", name);
    *ints = NULL, *n = 0;
    return XRT_OK;
  }
  if (a->kind != XRT_ATTR_INTS)
    return xrt__vfail(v, "attribute '%s' must be a list of integers", name);
  *ints = a->ints, *n = a->n;
  return XRT_OK;
}

/* Every entry of dims is a distinct dimension below rank. */
static xrt_status xrt__vdims(const xrt__vctx *v, const char *what,
                             const int64_t *dims, int64_t n, int64_t rank) {
  for (int64_t i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= rank)
      return xrt__vfail(v, "%s: dimension %" PRId64 " is out of range for "
                        "rank %" PRId64, what, dims[i], rank);
    for (int64_t j = 0; j < i; j++)
      if (dims[j] == dims[i])
        return xrt__vfail(v, "%s: dimension %" PRId64 " appears twice", what,
                          dims[i]);
  }
  return XRT_OK;
}

/* An INTS field of a DICT attribute such as dimension numbers; an absent
 * field is an empty list. */
static xrt_status xrt__vfield(const xrt__vctx *v, const xrt_ir_attr *dict,
                              const char *name, const int64_t **ints,
                              int64_t *n) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dict, name);
  *ints = NULL, *n = 0;
  if (!a) return XRT_OK;
  if (a->kind != XRT_ATTR_INTS)
    return xrt__vfail(v, "%s must be a list of integers", name);
  *ints = a->ints, *n = a->n;
  return XRT_OK;
}

static bool xrt__contains(const int64_t *d, int64_t n, int64_t x) {
  for (int64_t i = 0; i < n; i++)
    if (d[i] == x) return true;
  return false;
}

static xrt_status xrt__verify_compare(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s || (s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                           "operand types differ")))
    return s;
  const xrt_shape *out = xrt__result(v, 0);
  if (out->dtype != XRT_PRED || !xrt__same_dims(out, xrt__operand(v, 0)))
    return xrt__vfail(v, "result must be i1 of the operands' shape");
  const xrt_ir_attr *d = xrt__vattr(v, "comparison_direction", XRT_ATTR_ENUM);
  static const char *const dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  for (size_t i = 0; d && i < XRT__ARRAY_SIZE(dirs); i++)
    if (strcmp(d->s, dirs[i]) == 0) return XRT_OK;
  return xrt__vfail(v, "comparison_direction must be one of EQ, NE, GE, GT, "
                       "LE, LT");
}

static xrt_status xrt__verify_select(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s) return s;
  const xrt_shape *p = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (p->dtype != XRT_PRED || (p->rank != 0 && !xrt__same_dims(p, out)))
    return xrt__vfail(v, "pred must be i1, a scalar or of the result's shape");
  if ((s = xrt__vsame(v, v->op->operands[1], v->op->results[0],
                      "on_true type differs from result type")))
    return s;
  return xrt__vsame(v, v->op->operands[2], v->op->results[0],
                    "on_false type differs from result type");
}

static xrt_status xrt__verify_clamp(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s || (s = xrt__vsame(v, v->op->operands[1], v->op->results[0],
                           "operand type differs from result type")))
    return s;
  const xrt_shape *x = xrt__operand(v, 1);
  for (int i = 0; i < 3; i += 2) {
    const xrt_shape *b = xrt__operand(v, i);
    if (b->dtype != x->dtype || (b->rank != 0 && !xrt__same_dims(b, x)))
      return xrt__vfail(v, "%s must be a scalar or of the operand's shape and "
                        "type", i ? "max" : "min");
  }
  return XRT_OK;
}

static xrt_status xrt__verify_convert(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  if (!xrt__same_dims(xrt__operand(v, 0), xrt__result(v, 0)))
    return xrt__vfail(v, "operand and result shapes differ");
  return XRT_OK;
}

static xrt_status xrt__verify_bitcast(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  int bi = xrt_dtype_bits(in->dtype), bo = xrt_dtype_bits(out->dtype);
  bool ok = false;
  if (bi == bo) ok = xrt__same_dims(in, out);
  else if (bi > bo) /* one to many: an extra trailing dimension */
    ok = out->rank == in->rank + 1 && out->dims[in->rank] == bi / bo &&
         bi % bo == 0 && memcmp(in->dims, out->dims,
                                sizeof(int64_t) * (size_t)in->rank) == 0;
  else /* many to one: the operand's trailing dimension disappears */
    ok = in->rank == out->rank + 1 && in->dims[out->rank] == bo / bi &&
         bo % bi == 0 && memcmp(in->dims, out->dims,
                                sizeof(int64_t) * (size_t)out->rank) == 0;
  return ok ? XRT_OK : xrt__vfail(v, "shapes do not fit a bitcast between %s "
                                  "and %s", xrt_dtype_name(in->dtype),
                                  xrt_dtype_name(out->dtype));
}

static xrt_status xrt__verify_iota(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 0, 1);
  if (s) return s;
  const xrt_ir_attr *d = xrt__vattr(v, "iota_dimension", XRT_ATTR_INT);
  if (!d) return xrt__vfail(v, "missing integer attribute 'iota_dimension'");
  if (d->i < 0 || d->i >= xrt__result(v, 0)->rank)
    return xrt__vfail(v, "iota_dimension %" PRId64 " is out of range", d->i);
  return XRT_OK;
}

static xrt_status xrt__verify_broadcast_in_dim(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *dims;
  int64_t n;
  if (s || (s = xrt__vints(v, "broadcast_dimensions", false, &dims, &n)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (n != in->rank)
    return xrt__vfail(v, "broadcast_dimensions has %" PRId64 " entries for an "
                      "operand of rank %d", n, (int)in->rank);
  if ((s = xrt__vdims(v, "broadcast_dimensions", dims, n, out->rank))) return s;
  for (int64_t i = 0; i < n; i++)
    if (in->dims[i] != 1 && in->dims[i] != out->dims[dims[i]])
      return xrt__vfail(v, "operand dimension %" PRId64 " (size %" PRId64
                        ") does not fit result dimension %" PRId64 " (size %"
                        PRId64 ")", i, in->dims[i], dims[i],
                        out->dims[dims[i]]);
  return XRT_OK;
}

/* broadcast: the result's dims are broadcast_sizes followed by the
 * operand's. */
/* The result's dimensions must be want[0..rank). */
static xrt_status xrt__vresult_dims(const xrt__vctx *v, const xrt_shape *out,
                                    const int64_t *want) {
  for (int32_t i = 0; i < out->rank; i++)
    if (out->dims[i] != want[i])
      return xrt__vfail(v, "result dimension %d is %" PRId64 ", expected %"
                        PRId64, (int)i, out->dims[i], want[i]);
  return XRT_OK;
}

static xrt_status xrt__verify_broadcast(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *sizes;
  int64_t n;
  if (s || (s = xrt__vints(v, "broadcast_sizes", false, &sizes, &n)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (n + in->rank != out->rank)
    return xrt__vfail(v, "result rank %d is not %" PRId64 " broadcast sizes "
                      "plus the operand's rank %d", (int)out->rank, n,
                      (int)in->rank);
  int64_t want[XRT_MAX_RANK];
  for (int32_t i = 0; i < out->rank; i++)
    want[i] = i < n ? sizes[i] : in->dims[i - n];
  return xrt__vresult_dims(v, out, want);
}

static xrt_status xrt__verify_reshape(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (xrt_shape_numel(in) != xrt_shape_numel(out))
    return xrt__vfail(v, "operand has %" PRId64 " elements, result %" PRId64,
                      xrt_shape_numel(in), xrt_shape_numel(out));
  return XRT_OK;
}

static xrt_status xrt__verify_transpose(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *perm;
  int64_t n;
  if (s || (s = xrt__vints(v, "permutation", false, &perm, &n))) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (n != in->rank || out->rank != in->rank)
    return xrt__vfail(v, "permutation must have one entry per dimension");
  if ((s = xrt__vdims(v, "permutation", perm, n, in->rank))) return s;
  for (int64_t i = 0; i < n; i++)
    if (out->dims[i] != in->dims[perm[i]])
      return xrt__vfail(v, "result dimension %" PRId64 " must be %" PRId64, i,
                        in->dims[perm[i]]);
  return in->dtype == out->dtype ? XRT_OK
                                 : xrt__vfail(v, "element types differ");
}

static xrt_status xrt__verify_slice(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *st, *li, *sd;
  int64_t n1, n2, n3;
  if (s || (s = xrt__vints(v, "start_indices", false, &st, &n1)) ||
      (s = xrt__vints(v, "limit_indices", false, &li, &n2)) ||
      (s = xrt__vints(v, "strides", true, &sd, &n3)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (n1 != in->rank || n2 != in->rank || (sd && n3 != in->rank) ||
      out->rank != in->rank)
    return xrt__vfail(v, "start, limit and strides need one entry per "
                         "dimension");
  for (int64_t i = 0; i < n1; i++) {
    int64_t stride = sd ? sd[i] : 1;
    if (st[i] < 0 || st[i] > li[i] || li[i] > in->dims[i] || stride <= 0)
      return xrt__vfail(v, "dimension %" PRId64 ": slice %" PRId64 ":%" PRId64
                        ":%" PRId64 " is invalid for size %" PRId64, i, st[i],
                        li[i], stride, in->dims[i]);
    if (out->dims[i] != (li[i] - st[i] + stride - 1) / stride)
      return xrt__vfail(v, "result dimension %" PRId64 " has the wrong size",
                        i);
  }
  return in->dtype == out->dtype ? XRT_OK
                                 : xrt__vfail(v, "element types differ");
}

/* stablehlo.dot: an lhs of rank 1 or 2 contracted on its last dimension
 * with the first of an rhs of rank 1 or 2. */
static xrt_status xrt__verify_dot(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s) return s;
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  const xrt_shape *out = xrt__result(v, 0);
  if (l->rank < 1 || l->rank > 2 || r->rank < 1 || r->rank > 2)
    return xrt__vfail(v, "operands must be of rank 1 or 2");
  if (l->dims[l->rank - 1] != r->dims[0])
    return xrt__vfail(v, "lhs dimension %d (%" PRId64 ") and rhs dimension 0 "
                      "(%" PRId64 ") must match", (int)l->rank - 1,
                      l->dims[l->rank - 1], r->dims[0]);
  if (out->rank != l->rank + r->rank - 2)
    return xrt__vfail(v, "result rank %d, expected %d", (int)out->rank,
                      (int)(l->rank + r->rank - 2));
  int64_t want[XRT_MAX_RANK];
  for (int32_t i = 0; i < out->rank; i++)
    want[i] = i < l->rank - 1 ? l->dims[i] : r->dims[i - l->rank + 2];
  return xrt__vresult_dims(v, out, want);
}

static xrt_status xrt__verify_get_dimension_size(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_ir_attr *d = xrt__vattr(v, "dimension", XRT_ATTR_INT);
  if (!d || d->i < 0 || d->i >= xrt__operand(v, 0)->rank)
    return xrt__vfail(v, "dimension attribute is missing or out of range");
  const xrt_shape *out = xrt__result(v, 0);
  if (out->rank != 0 || out->dtype != XRT_S32)
    return xrt__vfail(v, "result must be tensor<i32>");
  return XRT_OK;
}

static xrt_status xrt__verify_concatenate(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, -1, 1);
  if (s) return s;
  if (v->op->num_operands < 1) return xrt__vfail(v, "needs an operand");
  const xrt_ir_attr *d = xrt__vattr(v, "dimension", XRT_ATTR_INT);
  const xrt_shape *out = xrt__result(v, 0);
  if (!d || d->i < 0 || d->i >= out->rank)
    return xrt__vfail(v, "dimension attribute is missing or out of range");
  int64_t total = 0;
  for (int i = 0; i < v->op->num_operands; i++) {
    const xrt_shape *in = xrt__operand(v, i);
    if (in->rank != out->rank || in->dtype != out->dtype)
      return xrt__vfail(v, "operand %d differs in rank or element type", i);
    for (int32_t k = 0; k < in->rank; k++)
      if (k != d->i && in->dims[k] != out->dims[k])
        return xrt__vfail(v, "operand %d differs in dimension %d", i, (int)k);
    total += in->dims[d->i];
  }
  if (total != out->dims[d->i])
    return xrt__vfail(v, "result dimension %" PRId64 " must be %" PRId64, d->i,
                      total);
  return XRT_OK;
}

static xrt_status xrt__verify_pad(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  const int64_t *lo, *hi, *in_;
  int64_t n1, n2, n3;
  if (s || (s = xrt__vints(v, "edge_padding_low", false, &lo, &n1)) ||
      (s = xrt__vints(v, "edge_padding_high", false, &hi, &n2)) ||
      (s = xrt__vints(v, "interior_padding", true, &in_, &n3)))
    return s;
  const xrt_shape *x = xrt__operand(v, 0), *pv = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if (pv->rank != 0 || pv->dtype != x->dtype || out->dtype != x->dtype)
    return xrt__vfail(v, "padding value must be a scalar of the operand's "
                         "element type");
  if (n1 != x->rank || n2 != x->rank || (in_ && n3 != x->rank) ||
      out->rank != x->rank)
    return xrt__vfail(v, "padding needs one entry per dimension");
  for (int64_t i = 0; i < n1; i++) {
    int64_t interior = in_ ? in_[i] : 0;
    if (interior < 0) return xrt__vfail(v, "interior padding is negative");
    int64_t size = x->dims[i] ? lo[i] + hi[i] + x->dims[i] +
                                    (x->dims[i] - 1) * interior
                              : lo[i] + hi[i];
    if (size < 0 || size != out->dims[i])
      return xrt__vfail(v, "result dimension %" PRId64 " must be %" PRId64, i,
                        size);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_reverse(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  const int64_t *dims;
  int64_t n;
  if (s || (s = xrt__vints(v, "dimensions", false, &dims, &n)) ||
      (s = xrt__vdims(v, "dimensions", dims, n, xrt__operand(v, 0)->rank)))
    return s;
  return xrt__vsame(v, v->op->operands[0], v->op->results[0],
                    "result type differs from operand type");
}

/* The region's block arguments and terminator operands have these types. */
static xrt_status xrt__vregion_sig(const xrt__vctx *v, const xrt_ir_region *r,
                                   const char *what, int nargs,
                                   const xrt_ir_type *const *args, int nrets,
                                   const xrt_ir_type *const *rets) {
  if (r->num_args != nargs)
    return xrt__vfail(v, "%s region takes %d argument(s), expected %d", what,
                      (int)r->num_args, nargs);
  for (int i = 0; i < nargs; i++)
    if (args[i] && !xrt__type_equal(&v->func->value_types[r->args[i]], args[i]))
      return xrt__vfail(v, "%s region argument %d has the wrong type", what, i);
  const xrt_ir_op *term = r->num_ops ? &r->ops[r->num_ops - 1] : NULL;
  if (!term || term->num_operands != nrets)
    return xrt__vfail(v, "%s region must return %d value(s)", what, nrets);
  for (int i = 0; i < nrets; i++)
    if (rets[i] &&
        !xrt__type_equal(&v->func->value_types[term->operands[i]], rets[i]))
      return xrt__vfail(v, "%s region returns a value of the wrong type at "
                        "position %d", what, i);
  return XRT_OK;
}

static xrt_status xrt__verify_reduce(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_results;
  xrt_status s = xrt__vcounts(v, 2 * n, n);
  const int64_t *dims;
  int64_t nd;
  if (s || (s = xrt__vints(v, "dimensions", false, &dims, &nd))) return s;
  if (n < 1 || op->num_regions != 1)
    return xrt__vfail(v, "needs at least one input and one body region");
  const xrt_shape *in0 = xrt__operand(v, 0);
  if ((s = xrt__vdims(v, "dimensions", dims, nd, in0->rank))) return s;
  const xrt_ir_type *sig[64];
  if (2 * n > 64) return xrt__vfail(v, "too many operands");
  for (int i = 0; i < n; i++) {
    const xrt_shape *in = xrt__operand(v, i), *init = xrt__operand(v, n + i),
                    *out = xrt__result(v, i);
    if (!xrt__same_dims(in, in0))
      return xrt__vfail(v, "inputs differ in shape");
    if (init->rank != 0 || init->dtype != out->dtype)
      return xrt__vfail(v, "init value %d must be a scalar of result %d's "
                        "element type", i, i);
    int32_t k = 0;
    for (int32_t d = 0; d < in->rank; d++) {
      if (xrt__contains(dims, nd, d)) continue;
      if (k >= out->rank || out->dims[k] != in->dims[d])
        return xrt__vfail(v, "result %d has the wrong shape", i);
      k++;
    }
    if (k != out->rank) return xrt__vfail(v, "result %d has the wrong rank", i);
    sig[i] = sig[n + i] = xrt__vtype(v, op->operands[n + i]);
  }
  return xrt__vregion_sig(v, &op->regions[0], "body", 2 * n, sig, n, sig);
}

static xrt_status xrt__dot_dims(const xrt__vctx *v, const char *name,
                                const int64_t **ints, int64_t *n) {
  return xrt__vfield(v, xrt_ir_op_attr(v->op, "dot_dimension_numbers"), name,
                     ints, n);
}

static xrt_status xrt__verify_dot_general(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  const int64_t *lb, *rb, *lc, *rc;
  int64_t nlb, nrb, nlc, nrc;
  if (s || (s = xrt__dot_dims(v, "lhs_batching_dimensions", &lb, &nlb)) ||
      (s = xrt__dot_dims(v, "rhs_batching_dimensions", &rb, &nrb)) ||
      (s = xrt__dot_dims(v, "lhs_contracting_dimensions", &lc, &nlc)) ||
      (s = xrt__dot_dims(v, "rhs_contracting_dimensions", &rc, &nrc)))
    return s;
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if (nlb != nrb || nlc != nrc)
    return xrt__vfail(v, "lhs and rhs need as many batching and contracting "
                         "dimensions");
  int64_t ld[2 * XRT_MAX_RANK], rd[2 * XRT_MAX_RANK];
  if (nlb + nlc > XRT_MAX_RANK || nrb + nrc > XRT_MAX_RANK)
    return xrt__vfail(v, "too many dimensions");
  for (int64_t i = 0; i < nlb; i++) ld[i] = lb[i], rd[i] = rb[i];
  for (int64_t i = 0; i < nlc; i++) ld[nlb + i] = lc[i], rd[nrb + i] = rc[i];
  if ((s = xrt__vdims(v, "lhs dimensions", ld, nlb + nlc, l->rank)) ||
      (s = xrt__vdims(v, "rhs dimensions", rd, nrb + nrc, r->rank)))
    return s;
  for (int64_t i = 0; i < nlb + nlc; i++)
    if (l->dims[ld[i]] != r->dims[rd[i]])
      return xrt__vfail(v, "%s dimension sizes differ: lhs dimension %" PRId64
                        " is %" PRId64 ", rhs dimension %" PRId64 " is %"
                        PRId64, i < nlb ? "batching" : "contracting", ld[i],
                        l->dims[ld[i]], rd[i], r->dims[rd[i]]);
  /* Expected result: batch dims, lhs free dims, rhs free dims. */
  int64_t want[XRT_MAX_RANK * 2];
  int k = 0;
  for (int64_t i = 0; i < nlb; i++) want[k++] = l->dims[lb[i]];
  for (int side = 0; side < 2; side++) {
    const xrt_shape *x = side ? r : l;
    const int64_t *used = side ? rd : ld;
    int64_t nused = side ? nrb + nrc : nlb + nlc;
    for (int32_t d = 0; d < x->rank; d++)
      if (!xrt__contains(used, nused, d)) want[k++] = x->dims[d];
  }
  bool ok = out->rank == k;
  for (int i = 0; ok && i < k; i++) ok = out->dims[i] == want[i];
  if (!ok) return xrt__vfail(v, "result shape does not follow from the "
                                "operands and dimension numbers");
  if (l->dtype != r->dtype && !(xrt__vtype(v, v->op->operands[0])->quant ||
                                xrt__vtype(v, v->op->operands[1])->quant))
    return xrt__vfail(v, "lhs and rhs element types differ (%s vs %s)",
                      xrt_dtype_name(l->dtype), xrt_dtype_name(r->dtype));
  return XRT_OK;
}

static xrt_status xrt__verify_while(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands;
  if (op->num_results != n || op->num_regions != 2)
    return xrt__vfail(v, "needs as many results as operands and two regions");
  const xrt_ir_type *sig[256];
  if (n > 256) return xrt__vfail(v, "too many loop values");
  for (int i = 0; i < n; i++) {
    xrt_status s = xrt__vsame(v, op->operands[i], op->results[i],
                              "loop value type differs from result type");
    if (s) return s;
    sig[i] = xrt__vtype(v, op->operands[i]);
  }
  xrt_status s = xrt__vregion_sig(v, &op->regions[0], "cond", n, sig, 1,
                                  (const xrt_ir_type *[]){NULL});
  if (s) return s;
  const xrt_ir_region *c = &op->regions[0];
  const xrt_ir_type *ct =
      &v->func->value_types[c->ops[c->num_ops - 1].operands[0]];
  if (ct->kind != XRT_TYPE_TENSOR || ct->shape.dtype != XRT_PRED ||
      ct->shape.rank != 0)
    return xrt__vfail(v, "cond region must return tensor<i1>");
  return xrt__vregion_sig(v, &op->regions[1], "body", n, sig, n, sig);
}

static xrt_status xrt__verify_call(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->callee < 0 || op->callee >= v->module->num_funcs)
    return xrt__vfail(v, "callee is not a function of this module");
  const xrt_ir_func *f = &v->module->funcs[op->callee];
  if (op->num_operands != f->body.num_args || op->num_results != f->num_results)
    return xrt__vfail(v, "@%s takes %d argument(s) and returns %d", f->name,
                      (int)f->body.num_args, (int)f->num_results);
  for (int i = 0; i < op->num_operands; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->operands[i]),
                         &f->value_types[f->body.args[i]]))
      return xrt__vfail(v, "argument %d has the wrong type for @%s", i,
                        f->name);
  for (int i = 0; i < op->num_results; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->results[i]), &f->result_types[i]))
      return xrt__vfail(v, "result %d has the wrong type for @%s", i, f->name);
  return XRT_OK;
}

static xrt_status xrt__verify_constant(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 0, 1);
  if (s) return s;
  const xrt_ir_attr *a = xrt__vattr(v, "value", XRT_ATTR_DENSE);
  if (!a || !a->lit) return xrt__vfail(v, "missing dense attribute 'value'");
  if (!xrt__shape_equal(&a->lit->type.shape, xrt__result(v, 0)))
    return xrt__vfail(v, "value type differs from result type");
  return XRT_OK;
}

static xrt_status xrt__verify_custom_call(const xrt__vctx *v) {
  const xrt_ir_attr *t = xrt__vattr(v, "call_target_name", XRT_ATTR_STRING);
  if (!t) return xrt__vfail(v, "missing string attribute 'call_target_name'");
  return XRT_OK;
}

/* ----------------------------------------------------------------------
 * Verifier constraints of the index op family: gather, dynamic_gather,
 * scatter, dynamic_slice, dynamic_update_slice, reduce_window,
 * select_and_scatter and the dynamic_* shape ops (spec "Constraints"
 * sections; Cn below are the spec's numbers). Returns XRT_OK for ops of
 * other families.
 * -------------------------------------------------------------------- */

#define XRT__IX_BIG ((int64_t)1 << 40) /* window attribute values beyond this
                                          cannot describe a real tensor */

static bool xrt__ix_int(xrt_dtype t) {
  return xrt_dtype_is_signed_int(t) || xrt_dtype_is_unsigned_int(t);
}

/* A list field of a dimension-numbers DICT; absent means empty. */
/* In range, unique and (when sorted is set) ascending. */
static xrt_status xrt__ix_dims(const xrt__vctx *v, const char *what,
                               const int64_t *d, int64_t n, int64_t rank,
                               bool sorted) {
  xrt_status s = xrt__vdims(v, what, d, n, rank);
  if (s) return s;
  for (int64_t i = 1; sorted && i < n; i++)
    if (d[i] < d[i - 1]) return xrt__vfail(v, "%s must be sorted", what);
  return XRT_OK;
}

/* The concatenation of a and b has no repeated entry. */
static xrt_status xrt__ix_unique2(const xrt__vctx *v, const char *what,
                                  const int64_t *a, int64_t na,
                                  const int64_t *b, int64_t nb) {
  for (int64_t i = 0; i < na; i++)
    if (xrt__contains(b, nb, a[i]))
      return xrt__vfail(v, "%s: dimension %" PRId64 " appears twice", what,
                        a[i]);
  return XRT_OK;
}

/* Shared by gather and scatter: the batching dims pair up (same count,
 * equal sizes, index_vector_dim not among them), index_vector_dim is in
 * range and the index vector has one entry per mapped dimension. */
typedef struct xrt__ix_dn {
  const int64_t *win, *ins, *obat, *ibat, *map;
  int64_t nwin, nins, nobat, nibat, nmap, ivd;
} xrt__ix_dn;

static xrt_status xrt__ix_common(const xrt__vctx *v, const xrt__ix_dn *d,
                                 const xrt_shape *opnd, const xrt_shape *idx,
                                 const char *const *names) {
  xrt_status s;
  if (!xrt__ix_int(idx->dtype))
    return xrt__vfail(v, "indices must have an integer element type");
  if (d->ivd < 0 || d->ivd > idx->rank)
    return xrt__vfail(v, "index_vector_dim %" PRId64 " is out of range for "
                      "indices of rank %d", d->ivd, (int)idx->rank);
  if (d->nwin + d->nins + d->nobat != opnd->rank)
    return xrt__vfail(v, "%s, %s and %s must cover the operand's %d "
                      "dimensions", names[0], names[1], names[2],
                      (int)opnd->rank);
  if ((s = xrt__ix_dims(v, names[1], d->ins, d->nins, opnd->rank, true)) ||
      (s = xrt__ix_dims(v, names[2], d->obat, d->nobat, opnd->rank, true)) ||
      (s = xrt__ix_unique2(v, names[1], d->ins, d->nins, d->obat, d->nobat)) ||
      (s = xrt__ix_dims(v, names[3], d->ibat, d->nibat, idx->rank, false)) ||
      (s = xrt__ix_dims(v, names[4], d->map, d->nmap, opnd->rank, false)) ||
      (s = xrt__ix_unique2(v, names[4], d->map, d->nmap, d->obat, d->nobat)))
    return s;
  if (xrt__contains(d->ibat, d->nibat, d->ivd))
    return xrt__vfail(v, "index_vector_dim must not be a batching dimension");
  if (d->nobat != d->nibat)
    return xrt__vfail(v, "%s and %s differ in length", names[2], names[3]);
  for (int64_t i = 0; i < d->nobat; i++)
    if (opnd->dims[d->obat[i]] != idx->dims[d->ibat[i]])
      return xrt__vfail(v, "batching dimension sizes differ: operand %" PRId64
                        " vs indices %" PRId64, opnd->dims[d->obat[i]],
                        idx->dims[d->ibat[i]]);
  int64_t nvec = d->ivd < idx->rank ? idx->dims[d->ivd] : 1;
  if (d->nmap != nvec)
    return xrt__vfail(v, "%s has %" PRId64 " entries but the index vector "
                      "has %" PRId64, names[4], d->nmap, nvec);
  return XRT_OK;
}

/* combine(): the batch sizes (indices shape without index_vector_dim) at
 * the positions not in wdims, the window sizes at wdims. */
static xrt_status xrt__ix_combine(const xrt__vctx *v, const xrt_shape *idx,
                                  int64_t ivd, const int64_t *wdims,
                                  int64_t nw, const int64_t *wsize,
                                  const xrt_shape *got, const char *what) {
  int64_t rank = nw + idx->rank - (ivd < idx->rank ? 1 : 0);
  if (got->rank != rank)
    return xrt__vfail(v, "%s must have rank %" PRId64, what, rank);
  int32_t bi = 0;
  int64_t wi = 0;
  for (int32_t d = 0; d < got->rank; d++) {
    int64_t want;
    if (xrt__contains(wdims, nw, d)) {
      want = wsize[wi++];
    } else {
      if (bi == ivd) bi++;
      want = idx->dims[bi++];
    }
    if (want >= 0 && got->dims[d] != want)
      return xrt__vfail(v, "%s dimension %d must be %" PRId64, what, (int)d,
                        want);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_gather(const xrt__vctx *v, bool dynamic) {
  static const char *const names[5] = {
      "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
      "start_indices_batching_dims", "start_index_map"};
  xrt_status s = xrt__vcounts(v, dynamic ? 3 : 2, 1);
  if (s) return s;
  const xrt_ir_attr *dn = xrt__vattr(v, "dimension_numbers", XRT_ATTR_DICT);
  if (!dn) return xrt__vfail(v, "missing attribute 'dimension_numbers'");
  xrt__ix_dn d;
  if ((s = xrt__vfield(v, dn, names[0], &d.win, &d.nwin)) ||
      (s = xrt__vfield(v, dn, names[1], &d.ins, &d.nins)) ||
      (s = xrt__vfield(v, dn, names[2], &d.obat, &d.nobat)) ||
      (s = xrt__vfield(v, dn, names[3], &d.ibat, &d.nibat)) ||
      (s = xrt__vfield(v, dn, names[4], &d.map, &d.nmap)))
    return s;
  const xrt_ir_attr *iv = xrt_ir_attr_field(dn, "index_vector_dim");
  d.ivd = iv && iv->kind == XRT_ATTR_INT ? iv->i : 0;
  const xrt_shape *op = xrt__operand(v, 0), *idx = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if ((s = xrt__ix_common(v, &d, op, idx, names)) ||
      (s = xrt__ix_dims(v, names[0], d.win, d.nwin, out->rank, true)))
    return s;
  if (op->dtype != out->dtype)
    return xrt__vfail(v, "operand and result element types differ");
  int64_t ss[XRT_MAX_RANK] = {0}, offs[XRT_MAX_RANK] = {0}, no = 0;
  if (dynamic) {
    const xrt_shape *sz = xrt__operand(v, 2);
    if (!xrt__ix_int(sz->dtype) || sz->rank != 1 || sz->dims[0] != op->rank)
      return xrt__vfail(v, "slice_sizes must be a 1-d integer tensor of %d "
                        "elements", (int)op->rank);
    for (int32_t k = 0; k < op->rank; k++) ss[k] = -1; /* known at run time */
  } else {
    const int64_t *a;
    int64_t n;
    if ((s = xrt__vints(v, "slice_sizes", false, &a, &n))) return s;
    if (n != op->rank)
      return xrt__vfail(v, "slice_sizes needs one entry per operand "
                        "dimension (%d)", (int)op->rank);
    for (int32_t k = 0; k < op->rank; k++) {
      if (a[k] < 0 || a[k] > op->dims[k])
        return xrt__vfail(v, "slice_sizes[%d] = %" PRId64 " must be in [0, %"
                          PRId64 "]", (int)k, a[k], op->dims[k]);
      bool folded = xrt__contains(d.ins, d.nins, k) ||
                    xrt__contains(d.obat, d.nobat, k);
      if (folded && a[k] > 1)
        return xrt__vfail(v, "slice_sizes[%d] of a collapsed or batching "
                          "dimension must be 0 or 1", (int)k);
      ss[k] = a[k];
    }
  }
  for (int32_t k = 0; k < op->rank; k++)
    if (!xrt__contains(d.ins, d.nins, k) && !xrt__contains(d.obat, d.nobat, k))
      offs[no++] = ss[k];
  if ((s = xrt__ix_combine(v, idx, d.ivd, d.win, d.nwin, offs, out,
                           "result")))
    return s;
  if (dynamic) /* offset sizes come from the result: they must fit */
    for (int32_t k = 0, j = 0; k < op->rank; k++) {
      if (xrt__contains(d.ins, d.nins, k) || xrt__contains(d.obat, d.nobat, k))
        continue;
      if (out->dims[d.win[j++]] > op->dims[k])
        return xrt__vfail(v, "slice of %" PRId64 " exceeds operand dimension "
                          "%d", out->dims[d.win[j - 1]], (int)k);
    }
  return XRT_OK;
}

static xrt_status xrt__verify_scatter(const xrt__vctx *v) {
  static const char *const names[5] = {
      "update_window_dims", "inserted_window_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"};
  const xrt_ir_op *op = v->op;
  int n = op->num_results;
  xrt_status s = xrt__vcounts(v, 2 * n + 1, n);
  if (s) return s;
  if (n < 1 || n > 32 || op->num_regions != 1)
    return xrt__vfail(v, "needs 1 to 32 inputs and one update_computation");
  const xrt_ir_attr *dn =
      xrt__vattr(v, "scatter_dimension_numbers", XRT_ATTR_DICT);
  if (!dn)
    return xrt__vfail(v, "missing attribute 'scatter_dimension_numbers'");
  xrt__ix_dn d;
  if ((s = xrt__vfield(v, dn, names[0], &d.win, &d.nwin)) ||
      (s = xrt__vfield(v, dn, names[1], &d.ins, &d.nins)) ||
      (s = xrt__vfield(v, dn, names[2], &d.obat, &d.nobat)) ||
      (s = xrt__vfield(v, dn, names[3], &d.ibat, &d.nibat)) ||
      (s = xrt__vfield(v, dn, names[4], &d.map, &d.nmap)))
    return s;
  const xrt_ir_attr *iv = xrt_ir_attr_field(dn, "index_vector_dim");
  d.ivd = iv && iv->kind == XRT_ATTR_INT ? iv->i : 0;
  const xrt_shape *in0 = xrt__operand(v, 0), *idx = xrt__operand(v, n),
                  *up0 = xrt__operand(v, n + 1);
  const xrt_ir_type *sig[64];
  for (int i = 0; i < n; i++) {
    const xrt_shape *in = xrt__operand(v, i), *up = xrt__operand(v, n + 1 + i);
    if (!xrt__same_dims(in, in0)) return xrt__vfail(v, "inputs differ in shape");
    if (!xrt__same_dims(up, up0))
      return xrt__vfail(v, "updates differ in shape");
    if (up->dtype != in->dtype)
      return xrt__vfail(v, "updates %d and input %d differ in element type",
                        i, i);
    if ((s = xrt__vsame(v, op->operands[i], op->results[i],
                        "result type differs from input type")))
      return s;
    sig[i] = sig[n + i] = NULL;
  }
  if ((s = xrt__ix_common(v, &d, in0, idx, names)) ||
      (s = xrt__ix_dims(v, names[0], d.win, d.nwin, up0->rank, true)))
    return s;
  int64_t ws[XRT_MAX_RANK], nw = 0;
  for (int32_t k = 0; k < in0->rank; k++)
    if (!xrt__contains(d.ins, d.nins, k) && !xrt__contains(d.obat, d.nobat, k))
      ws[nw++] = -1; /* any size up to the input's (checked below) */
  if ((s = xrt__ix_combine(v, idx, d.ivd, d.win, d.nwin, ws, up0,
                           "updates")))
    return s;
  for (int32_t k = 0, j = 0; k < in0->rank; k++) {
    if (xrt__contains(d.ins, d.nins, k) || xrt__contains(d.obat, d.nobat, k))
      continue;
    if (up0->dims[d.win[j++]] > in0->dims[k])
      return xrt__vfail(v, "update window dimension %" PRId64 " (size %"
                        PRId64 ") exceeds input dimension %d (size %" PRId64
                        ")", d.win[j - 1], up0->dims[d.win[j - 1]], (int)k,
                        in0->dims[k]);
  }
  if ((s = xrt__vregion_sig(v, &op->regions[0], "update_computation", 2 * n,
                            sig, n, sig)))
    return s;
  const xrt_ir_region *r = &op->regions[0];
  const xrt_ir_op *term = &r->ops[r->num_ops - 1];
  for (int i = 0; i < 2 * n; i++) {
    const xrt_ir_type *a = xrt__vtype(v, r->args[i]);
    const xrt_ir_type *rt = i < n ? xrt__vtype(v, term->operands[i]) : a;
    if (a->kind != XRT_TYPE_TENSOR || a->shape.rank != 0 ||
        rt->kind != XRT_TYPE_TENSOR || rt->shape.rank != 0 ||
        (!a->quant && a->shape.dtype != xrt__operand(v, i % n)->dtype) ||
        (i < n && rt->shape.dtype != a->shape.dtype))
      return xrt__vfail(v, "update_computation must map scalars of the "
                        "inputs' element types");
  }
  return XRT_OK;
}

/* Start indices: count scalars of one integer type from operand first. */
static xrt_status xrt__ix_starts(const xrt__vctx *v, int first, int count) {
  for (int i = 0; i < count; i++) {
    const xrt_shape *s = xrt__operand(v, first + i);
    if (s->rank != 0 || !xrt__ix_int(s->dtype))
      return xrt__vfail(v, "start index %d must be an integer scalar", i);
    if (s->dtype != xrt__operand(v, first)->dtype)
      return xrt__vfail(v, "start indices must share one element type");
  }
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_slice(const xrt__vctx *v) {
  if (v->op->num_operands < 1)
    return xrt__vfail(v, "expects an operand and start indices");
  const xrt_shape *x = xrt__operand(v, 0);
  xrt_status s = xrt__vcounts(v, 1 + x->rank, 1);
  const int64_t *sz;
  int64_t n;
  if (s || (s = xrt__ix_starts(v, 1, x->rank)) ||
      (s = xrt__vints(v, "slice_sizes", false, &sz, &n)))
    return s;
  const xrt_shape *out = xrt__result(v, 0);
  if (n != x->rank)
    return xrt__vfail(v, "slice_sizes needs one entry per operand dimension "
                      "(%d)", (int)x->rank);
  if (out->dtype != x->dtype || out->rank != x->rank)
    return xrt__vfail(v, "result must have the operand's element type and "
                      "rank");
  for (int32_t k = 0; k < x->rank; k++) {
    if (sz[k] < 0 || sz[k] > x->dims[k])
      return xrt__vfail(v, "slice_sizes[%d] = %" PRId64 " must be in [0, %"
                        PRId64 "]", (int)k, sz[k], x->dims[k]);
    if (out->dims[k] != sz[k])
      return xrt__vfail(v, "result dimension %d must be %" PRId64, (int)k,
                        sz[k]);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_update_slice(const xrt__vctx *v) {
  if (v->op->num_operands < 2)
    return xrt__vfail(v, "expects an operand, an update and start indices");
  const xrt_shape *x = xrt__operand(v, 0), *u = xrt__operand(v, 1);
  xrt_status s = xrt__vcounts(v, 2 + x->rank, 1);
  if (s || (s = xrt__ix_starts(v, 2, x->rank)) ||
      (s = xrt__vsame(v, v->op->operands[0], v->op->results[0],
                      "result type differs from operand type")))
    return s;
  if (u->dtype != x->dtype || u->rank != x->rank)
    return xrt__vfail(v, "update must have the operand's element type and "
                      "rank");
  for (int32_t k = 0; k < x->rank; k++)
    if (u->dims[k] > x->dims[k])
      return xrt__vfail(v, "update dimension %d (size %" PRId64 ") exceeds "
                        "the operand's (%" PRId64 ")", (int)k, u->dims[k],
                        x->dims[k]);
  return XRT_OK;
}

/* A window attribute: rank entries (2*rank for padding), each in
 * [lo, XRT__IX_BIG] in magnitude; absent means every entry is dflt. */
static xrt_status xrt__ix_window_attr(const xrt__vctx *v, const char *name,
                                      bool required, int32_t rank,
                                      int per_dim, int64_t lo,
                                      int64_t dflt, int64_t *out) {
  const int64_t *a;
  int64_t n;
  xrt_status s = xrt__vints(v, name, !required, &a, &n);
  if (s) return s;
  if (a && n != per_dim * rank)
    return xrt__vfail(v, "%s needs %d entries, has %" PRId64, name,
                      per_dim * (int)rank, n);
  for (int32_t i = 0; i < per_dim * rank; i++) {
    out[i] = a ? a[i] : dflt;
    if (out[i] < lo || out[i] > XRT__IX_BIG || out[i] < -XRT__IX_BIG)
      return xrt__vfail(v, "%s[%d] = %" PRId64 " must be %s", name, (int)i,
                        out[i], lo > 0 ? "positive" : "in range");
  }
  return XRT_OK;
}

/* Result sizes of windows over x: the shape the spec's num_windows gives. */
static xrt_status xrt__ix_windows(const xrt__vctx *v, const xrt_shape *x,
                                  bool dilations, int64_t *out) {
  int64_t wd[XRT_MAX_RANK], ws[XRT_MAX_RANK], bd[XRT_MAX_RANK],
      wdl[XRT_MAX_RANK], pad[2 * XRT_MAX_RANK];
  int32_t r = x->rank;
  xrt_status s =
      xrt__ix_window_attr(v, "window_dimensions", true, r, 1, 1, 1, wd);
  if (s ||
      (s = xrt__ix_window_attr(v, "window_strides", false, r, 1, 1, 1, ws)) ||
      (s = xrt__ix_window_attr(v, "padding", false, r, 2, -XRT__IX_BIG, 0,
                               pad)))
    return s;
  for (int32_t d = 0; d < r; d++) bd[d] = wdl[d] = 1;
  if (dilations &&
      ((s = xrt__ix_window_attr(v, "base_dilations", false, r, 1, 1, 1, bd)) ||
       (s = xrt__ix_window_attr(v, "window_dilations", false, r, 1, 1, 1,
                                wdl))))
    return s;
  for (int32_t d = 0; d < r; d++) {
    if (x->dims[d] > XRT__IX_BIG ||
        (x->dims[d] > 1 && bd[d] > XRT__IX_BIG / (x->dims[d] - 1)) ||
        (wd[d] > 1 && wdl[d] > XRT__IX_BIG / (wd[d] - 1)))
      return xrt__vfail(v, "window of dimension %d is too large", (int)d);
    int64_t dil = x->dims[d] ? (x->dims[d] - 1) * bd[d] + 1 : 0;
    int64_t padded = dil + pad[2 * d] + pad[2 * d + 1];
    int64_t win = (wd[d] - 1) * wdl[d] + 1;
    if (padded < 0)
      return xrt__vfail(v, "padding makes dimension %d negative", (int)d);
    out[d] = padded < win ? 0 : (padded - win) / ws[d] + 1;
  }
  return XRT_OK;
}

static xrt_status xrt__verify_reduce_window(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_results;
  xrt_status s = xrt__vcounts(v, 2 * n, n);
  if (s) return s;
  if (n < 1 || n > 32 || op->num_regions != 1)
    return xrt__vfail(v, "needs 1 to 32 inputs and one body region");
  const xrt_shape *in0 = xrt__operand(v, 0);
  int64_t want[XRT_MAX_RANK];
  if ((s = xrt__ix_windows(v, in0, true, want))) return s;
  const xrt_ir_type *sig[64];
  for (int i = 0; i < n; i++) {
    const xrt_shape *in = xrt__operand(v, i), *init = xrt__operand(v, n + i),
                    *out = xrt__result(v, i);
    if (!xrt__same_dims(in, in0)) return xrt__vfail(v, "inputs differ in shape");
    if (init->rank != 0 || init->dtype != out->dtype)
      return xrt__vfail(v, "init value %d must be a scalar of result %d's "
                        "element type", i, i);
    if (out->rank != in0->rank)
      return xrt__vfail(v, "result %d must have the inputs' rank", i);
    for (int32_t d = 0; d < out->rank; d++)
      if (out->dims[d] != want[d])
        return xrt__vfail(v, "result %d dimension %d must be %" PRId64, i,
                          (int)d, want[d]);
    sig[i] = sig[n + i] = xrt__vtype(v, op->operands[n + i]);
  }
  return xrt__vregion_sig(v, &op->regions[0], "body", 2 * n, sig, n, sig);
}

static xrt_status xrt__verify_select_and_scatter(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s) return s;
  if (op->num_regions != 2)
    return xrt__vfail(v, "needs a select and a scatter region");
  const xrt_shape *x = xrt__operand(v, 0), *src = xrt__operand(v, 1),
                  *init = xrt__operand(v, 2);
  if ((s = xrt__vsame(v, op->operands[0], op->results[0],
                      "result type differs from operand type")))
    return s;
  if (src->dtype != x->dtype || init->dtype != x->dtype || init->rank != 0)
    return xrt__vfail(v, "source and init_value must have the operand's "
                      "element type (init_value a scalar)");
  int64_t want[XRT_MAX_RANK];
  if ((s = xrt__ix_windows(v, x, false, want))) return s;
  if (src->rank != x->rank)
    return xrt__vfail(v, "source must have the operand's rank");
  for (int32_t d = 0; d < x->rank; d++)
    if (src->dims[d] != want[d])
      return xrt__vfail(v, "source dimension %d must be %" PRId64
                        " (the number of windows)", (int)d, want[d]);
  const xrt_ir_type *t = xrt__vtype(v, op->operands[2]);
  const xrt_ir_type *sig[2] = {t, t};
  if ((s = xrt__vregion_sig(v, &op->regions[0], "select", 2, sig, 1,
                            (const xrt_ir_type *[]){NULL})))
    return s;
  const xrt_ir_region *sel = &op->regions[0];
  const xrt_ir_type *rt = xrt__vtype(v, sel->ops[sel->num_ops - 1].operands[0]);
  if (rt->kind != XRT_TYPE_TENSOR || rt->shape.dtype != XRT_PRED ||
      rt->shape.rank != 0)
    return xrt__vfail(v, "select region must return tensor<i1>");
  return xrt__vregion_sig(v, &op->regions[1], "scatter", 2, sig, 1, sig);
}

/* Operand k is a 1-d integer tensor with n elements. */
static xrt_status xrt__ix_shape_operand(const xrt__vctx *v, int k,
                                        const char *what, int64_t n) {
  const xrt_shape *s = xrt__operand(v, k);
  if (!xrt__ix_int(s->dtype) || s->rank != 1 || s->dims[0] != n)
    return xrt__vfail(v, "%s must be a 1-d integer tensor of %" PRId64
                      " elements", what, n);
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_broadcast_in_dim(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  const int64_t *bd, *ke, *kn;
  int64_t n, nke, nkn;
  if (s || (s = xrt__vints(v, "broadcast_dimensions", false, &bd, &n)) ||
      (s = xrt__vints(v, "known_expanding_dimensions", true, &ke, &nke)) ||
      (s = xrt__vints(v, "known_nonexpanding_dimensions", true, &kn, &nkn)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if ((s = xrt__ix_shape_operand(v, 1, "output_dimensions", out->rank)))
    return s;
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (n != in->rank)
    return xrt__vfail(v, "broadcast_dimensions has %" PRId64 " entries for an "
                      "operand of rank %d", n, (int)in->rank);
  if ((s = xrt__vdims(v, "broadcast_dimensions", bd, n, out->rank)) ||
      (s = xrt__vdims(v, "known_expanding_dimensions", ke, nke, in->rank)) ||
      (s = xrt__vdims(v, "known_nonexpanding_dimensions", kn, nkn,
                      in->rank)) ||
      (s = xrt__ix_unique2(v, "known dimensions", ke, nke, kn, nkn)))
    return s;
  for (int64_t i = 0; i < n; i++)
    if (in->dims[i] != 1 && in->dims[i] != out->dims[bd[i]])
      return xrt__vfail(v, "operand dimension %" PRId64 " (size %" PRId64
                        ") does not broadcast to size %" PRId64, i,
                        in->dims[i], out->dims[bd[i]]);
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_iota(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *out = xrt__result(v, 0);
  if ((s = xrt__ix_shape_operand(v, 0, "output_shape", out->rank))) return s;
  const xrt_ir_attr *d = xrt__vattr(v, "iota_dimension", XRT_ATTR_INT);
  if (!d) return xrt__vfail(v, "missing integer attribute 'iota_dimension'");
  if (d->i < 0 || d->i >= out->rank)
    return xrt__vfail(v, "iota_dimension %" PRId64 " is out of range", d->i);
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_pad(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 5, 1);
  if (s) return s;
  const xrt_shape *x = xrt__operand(v, 0), *pv = xrt__operand(v, 1),
                  *out = xrt__result(v, 0);
  if (pv->rank != 0 || pv->dtype != x->dtype || out->dtype != x->dtype)
    return xrt__vfail(v, "padding value must be a scalar of the operand's "
                         "element type");
  if (out->rank != x->rank)
    return xrt__vfail(v, "result must have the operand's rank");
  static const char *const names[3] = {"edge_padding_low",
                                       "edge_padding_high",
                                       "interior_padding"};
  for (int i = 0; i < 3; i++)
    if ((s = xrt__ix_shape_operand(v, 2 + i, names[i], x->rank))) return s;
  return XRT_OK;
}

static xrt_status xrt__verify_dynamic_reshape(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if ((s = xrt__ix_shape_operand(v, 1, "output_shape", out->rank))) return s;
  if (in->dtype != out->dtype) return xrt__vfail(v, "element types differ");
  if (xrt_shape_numel(in) != xrt_shape_numel(out))
    return xrt__vfail(v, "operand has %" PRId64 " elements, result %" PRId64,
                      xrt_shape_numel(in), xrt_shape_numel(out));
  return XRT_OK;
}

static xrt_status xrt__verify_index(const xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_GATHER: return xrt__verify_gather(v, false);
  case XRT_OP_DYNAMIC_GATHER: return xrt__verify_gather(v, true);
  case XRT_OP_SCATTER: return xrt__verify_scatter(v);
  case XRT_OP_DYNAMIC_SLICE: return xrt__verify_dynamic_slice(v);
  case XRT_OP_DYNAMIC_UPDATE_SLICE: return xrt__verify_dynamic_update_slice(v);
  case XRT_OP_REDUCE_WINDOW: return xrt__verify_reduce_window(v);
  case XRT_OP_SELECT_AND_SCATTER: return xrt__verify_select_and_scatter(v);
  case XRT_OP_DYNAMIC_BROADCAST_IN_DIM:
    return xrt__verify_dynamic_broadcast_in_dim(v);
  case XRT_OP_DYNAMIC_IOTA: return xrt__verify_dynamic_iota(v);
  case XRT_OP_DYNAMIC_PAD: return xrt__verify_dynamic_pad(v);
  case XRT_OP_DYNAMIC_RESHAPE: return xrt__verify_dynamic_reshape(v);
  default: return XRT_OK;
  }
}
/* ----------------------------------------------------------------------
 * Verifier constraints of the ctrl op family. Returns XRT_OK for ops of
 * other families.
 * -------------------------------------------------------------------- */

#define XRT__CTRL_MAXV 256

/* A rank-0 tensor type of element type t (for region signatures). */
static xrt_ir_type xrt__scalar_type(xrt_dtype t) {
  xrt_ir_type s;
  memset(&s, 0, sizeof s);
  s.kind = XRT_TYPE_TENSOR;
  s.shape.dtype = t;
  return s;
}

static bool xrt__is_scalar_of(const xrt__vctx *v, int32_t id, xrt_dtype t) {
  const xrt_ir_type *ty = xrt__vtype(v, id);
  return ty->kind == XRT_TYPE_TENSOR && ty->shape.rank == 0 &&
         ty->shape.dtype == t;
}

/* if/case: (C1) branches take no arguments, (C2) return the result types. */
static xrt_status xrt__verify_branches(const xrt__vctx *v, bool is_if) {
  const xrt_ir_op *op = v->op;
  if (op->num_operands != 1)
    return xrt__vfail(v, "expects 1 operand, got %d", (int)op->num_operands);
  if (!xrt__is_scalar_of(v, op->operands[0], is_if ? XRT_PRED : XRT_S32))
    return xrt__vfail(v, is_if ? "pred must be tensor<i1>"
                               : "index must be tensor<i32>");
  if (is_if ? op->num_regions != 2 : op->num_regions < 1)
    return xrt__vfail(v, is_if ? "needs two regions (true and false branch)"
                               : "needs at least one branch");
  if (op->num_results > XRT__CTRL_MAXV)
    return xrt__vfail(v, "too many results");
  const xrt_ir_type *res[XRT__CTRL_MAXV + 1];
  for (int i = 0; i < op->num_results; i++) res[i] = xrt__vtype(v, op->results[i]);
  for (int k = 0; k < op->num_regions; k++) {
    char what[48];
    if (is_if) snprintf(what, sizeof what, "%s", k ? "false branch" : "true branch");
    else snprintf(what, sizeof what, "branch %d", k);
    xrt_status s = xrt__vregion_sig(v, &op->regions[k], what, 0, NULL,
                                    op->num_results, res);
    if (s) return s;
  }
  return XRT_OK;
}

/* map: (C1) operand shapes are the result's, (C2) at least one operand,
 * (C3) dimensions = [0, ..., rank-1], (C4) the region maps scalars. */
static xrt_status xrt__verify_map(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands;
  xrt_status s = xrt__vcounts(v, -1, 1);
  if (s) return s;
  if (n < 1 || n > XRT__CTRL_MAXV)
    return xrt__vfail(v, "needs 1 to %d operands", XRT__CTRL_MAXV);
  if (op->num_regions != 1) return xrt__vfail(v, "needs one region");
  const xrt_shape *o = xrt__result(v, 0);
  for (int i = 0; i < n; i++)
    if (!xrt__same_dims(xrt__operand(v, i), o))
      return xrt__vfail(v, "operand %d and the result differ in shape", i);
  const int64_t *dims;
  int64_t nd;
  if ((s = xrt__vints(v, "dimensions", true, &dims, &nd))) return s;
  if (dims && nd != o->rank)
    return xrt__vfail(v, "dimensions must be [0, ..., %d]", (int)o->rank - 1);
  for (int64_t i = 0; dims && i < nd; i++)
    if (dims[i] != i)
      return xrt__vfail(v, "dimensions must be [0, ..., %d]", (int)o->rank - 1);
  xrt_ir_type at[XRT__CTRL_MAXV], rt = xrt__scalar_type(o->dtype);
  const xrt_ir_type *args[XRT__CTRL_MAXV], *rets[1] = {&rt};
  for (int i = 0; i < n; i++) {
    at[i] = xrt__scalar_type(xrt__operand(v, i)->dtype);
    args[i] = xrt__vtype(v, op->operands[i])->quant ? NULL : &at[i];
  }
  if (xrt__vtype(v, op->results[0])->quant) rets[0] = NULL;
  return xrt__vregion_sig(v, &op->regions[0], "computation", n, args, 1, rets);
}

/* sort: (C1) operands, (C2) result types, (C3) one shape, (C4) dimension
 * in [-rank, rank), (C5) comparator (E0, E0, E1, E1, ...) -> tensor<i1>. */
static xrt_status xrt__verify_sort(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  int n = op->num_operands;
  xrt_status s = xrt__vcounts(v, -1, n);
  if (s) return s;
  if (n < 1 || n > XRT__CTRL_MAXV / 2)
    return xrt__vfail(v, "needs 1 to %d operands", XRT__CTRL_MAXV / 2);
  if (op->num_regions != 1) return xrt__vfail(v, "needs a comparator region");
  const xrt_shape *s0 = xrt__operand(v, 0);
  for (int i = 0; i < n; i++) {
    if ((s = xrt__vsame(v, op->operands[i], op->results[i],
                        "result type differs from operand type")))
      return s;
    if (!xrt__same_dims(xrt__operand(v, i), s0))
      return xrt__vfail(v, "operand %d differs in shape from operand 0", i);
  }
  const xrt_ir_attr *d = xrt__vattr(v, "dimension", -1);
  if (d && d->kind != XRT_ATTR_INT)
    return xrt__vfail(v, "attribute 'dimension' must be an integer");
  int64_t dim = d ? d->i : -1;
  if (dim < -(int64_t)s0->rank || dim >= s0->rank)
    return xrt__vfail(v, "dimension %" PRId64 " is out of range for rank %d",
                      dim, (int)s0->rank);
  xrt_ir_type at[XRT__CTRL_MAXV], rt = xrt__scalar_type(XRT_PRED);
  const xrt_ir_type *args[XRT__CTRL_MAXV], *rets[1] = {&rt};
  for (int i = 0; i < n; i++) {
    bool q = xrt__vtype(v, op->operands[i])->quant != NULL;
    at[i] = xrt__scalar_type(xrt__operand(v, i)->dtype);
    args[2 * i] = args[2 * i + 1] = q ? NULL : &at[i];
  }
  return xrt__vregion_sig(v, &op->regions[0], "comparator", 2 * n, args, 1,
                          rets);
}

/* composite: the decomposition is a function of the module whose
 * signature matches the operands and results. */
static xrt_status xrt__verify_composite(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  const xrt_ir_attr *d = xrt__vattr(v, "decomposition", XRT_ATTR_SYMBOL);
  if (!d || !d->s) return xrt__vfail(v, "missing symbol attribute 'decomposition'");
  const xrt_ir_attr *nm = xrt__vattr(v, "name", -1);
  if (nm && nm->kind != XRT_ATTR_STRING)
    return xrt__vfail(v, "attribute 'name' must be a string");
  const xrt_ir_func *f = NULL;
  for (int32_t i = 0; i < v->module->num_funcs && !f; i++)
    if (v->module->funcs[i].name && !strcmp(v->module->funcs[i].name, d->s))
      f = &v->module->funcs[i];
  if (!f) return xrt__vfail(v, "decomposition @%s is not a function of the "
                            "module", d->s);
  if (op->num_operands != f->body.num_args || op->num_results != f->num_results)
    return xrt__vfail(v, "decomposition @%s takes %d argument(s) and returns "
                      "%d", f->name, (int)f->body.num_args,
                      (int)f->num_results);
  for (int i = 0; i < op->num_operands; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->operands[i]),
                         &f->value_types[f->body.args[i]]))
      return xrt__vfail(v, "operand %d has the wrong type for @%s", i, f->name);
  for (int i = 0; i < op->num_results; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->results[i]), &f->result_types[i]))
      return xrt__vfail(v, "result %d has the wrong type for @%s", i, f->name);
  return XRT_OK;
}

/* tuple: (C1) the result is tuple<operand types...>. */
static xrt_status xrt__verify_tuple(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_results != 1) return xrt__vfail(v, "expects 1 result");
  const xrt_ir_type *t = xrt__vtype(v, op->results[0]);
  if (t->kind != XRT_TYPE_TUPLE || t->num_elems != op->num_operands)
    return xrt__vfail(v, "result must be a tuple of the %d operand types",
                      (int)op->num_operands);
  for (int i = 0; i < op->num_operands; i++)
    if (!xrt__type_equal(xrt__vtype(v, op->operands[i]), &t->elems[i]))
      return xrt__vfail(v, "tuple element %d differs from operand %d", i, i);
  return XRT_OK;
}

/* get_tuple_element: (C1) 0 <= index < size(operand), (C2) result type. */
static xrt_status xrt__verify_get_tuple_element(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_operands != 1 || op->num_results != 1)
    return xrt__vfail(v, "expects 1 operand and 1 result");
  const xrt_ir_type *t = xrt__vtype(v, op->operands[0]);
  if (t->kind != XRT_TYPE_TUPLE) return xrt__vfail(v, "operand must be a tuple");
  const xrt_ir_attr *k = xrt__vattr(v, "index", XRT_ATTR_INT);
  if (!k) return xrt__vfail(v, "missing integer attribute 'index'");
  if (k->i < 0 || k->i >= t->num_elems)
    return xrt__vfail(v, "index %" PRId64 " is out of range for a tuple of %d "
                      "element(s)", k->i, (int)t->num_elems);
  if (!xrt__type_equal(xrt__vtype(v, op->results[0]), &t->elems[k->i]))
    return xrt__vfail(v, "result type differs from tuple element %" PRId64,
                      k->i);
  return XRT_OK;
}

static bool xrt__is_token(const xrt__vctx *v, int32_t id) {
  return xrt__vtype(v, id)->kind == XRT_TYPE_TOKEN;
}

static xrt_status xrt__verify_after_all(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_results != 1 || !xrt__is_token(v, op->results[0]))
    return xrt__vfail(v, "result must be one !stablehlo.token");
  for (int i = 0; i < op->num_operands; i++)
    if (!xrt__is_token(v, op->operands[i]))
      return xrt__vfail(v, "operand %d must be a !stablehlo.token", i);
  return XRT_OK;
}

static xrt_status xrt__verify_barrier(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  if (op->num_operands != op->num_results)
    return xrt__vfail(v, "needs as many results as operands");
  for (int i = 0; i < op->num_operands; i++) {
    xrt_status s = xrt__vsame(v, op->operands[i], op->results[i],
                              "result type differs from operand type");
    if (s) return s;
  }
  return XRT_OK;
}

/* ids[0..n) are tensors except the last, a token (tokens_last) or all
 * tensors. */
static xrt_status xrt__vio_list(const xrt__vctx *v, const int32_t *ids, int n,
                                const char *what, bool token_last) {
  if (token_last && (n < 1 || !xrt__is_token(v, ids[n - 1])))
    return xrt__vfail(v, "the last %s must be a !stablehlo.token", what);
  for (int i = 0; i < n - (token_last ? 1 : 0); i++)
    if (xrt__vtype(v, ids[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "%s %d must be a tensor", what, i);
  return XRT_OK;
}

/* infeed/recv: token -> (tensors..., token); outfeed/send: (tensors...,
 * token) -> token. */
static xrt_status xrt__verify_io(const xrt__vctx *v, bool reads) {
  const xrt_ir_op *op = v->op;
  if (reads) {
    if (op->num_operands != 1 || !xrt__is_token(v, op->operands[0]))
      return xrt__vfail(v, "takes one !stablehlo.token");
    return xrt__vio_list(v, op->results, op->num_results, "result", true);
  }
  if (op->num_results != 1 || !xrt__is_token(v, op->results[0]))
    return xrt__vfail(v, "result must be one !stablehlo.token");
  return xrt__vio_list(v, op->operands, op->num_operands, "operand", true);
}

/* chlo.scan: (inputs..., inits...) -> (outputs..., carries...); the body
 * takes input slices and carries and returns output slices and carries. */
static xrt_status xrt__verify_scan(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  const xrt_ir_attr *d = xrt__vattr(v, "dimension", XRT_ATTR_INT);
  if (!d) return xrt__vfail(v, "missing integer attribute 'dimension'");
  if (op->num_regions != 1) return xrt__vfail(v, "needs a body region");
  const xrt_ir_region *r = &op->regions[0];
  if (r->num_args != op->num_operands)
    return xrt__vfail(v, "body takes %d argument(s), expected %d",
                      (int)r->num_args, (int)op->num_operands);
  const xrt_ir_op *term = r->num_ops ? &r->ops[r->num_ops - 1] : NULL;
  if (!term || term->num_operands != op->num_results)
    return xrt__vfail(v, "body must return %d value(s)", (int)op->num_results);
  const xrt_ir_attr *seg = xrt__vattr(v, "operandSegmentSizes", XRT_ATTR_INTS);
  if (seg && (seg->n != 2 || seg->ints[0] < 0 || seg->ints[1] < 0 ||
              seg->ints[0] + seg->ints[1] != op->num_operands ||
              seg->ints[1] > op->num_results))
    return xrt__vfail(v, "operandSegmentSizes does not fit the operands");
  for (int i = 0; i < op->num_operands; i++)
    if (xrt__vtype(v, op->operands[i])->kind != XRT_TYPE_TENSOR)
      return xrt__vfail(v, "operand %d must be a tensor", i);
  /* Without segment sizes the inits are the trailing operands whose body
   * argument has their own type (an input's argument is a slice). */
  int nc = 0;
  if (seg) nc = (int)seg->ints[1];
  else
    while (nc < op->num_operands &&
           xrt__type_equal(&v->func->value_types[r->args[op->num_operands - 1 - nc]],
                           xrt__vtype(v, op->operands[op->num_operands - 1 - nc])))
      nc++;
  int ni = op->num_operands - nc, no = op->num_results - nc;
  if (no < 0) return xrt__vfail(v, "fewer results than carries");
  for (int i = 0; i < ni; i++) {
    const xrt_shape *in = xrt__operand(v, i);
    const xrt_ir_type *at = &v->func->value_types[r->args[i]];
    if (d->i < 0 || d->i >= in->rank)
      return xrt__vfail(v, "dimension %" PRId64 " is out of range for input "
                        "%d of rank %d", d->i, i, (int)in->rank);
    bool ok = at->kind == XRT_TYPE_TENSOR && at->shape.dtype == in->dtype &&
              at->shape.rank == in->rank - 1;
    for (int k = 0, j = 0; ok && k < in->rank; k++)
      if (k != d->i) ok = at->shape.dims[j++] == in->dims[k];
    if (!ok)
      return xrt__vfail(v, "body argument %d must be a slice of input %d", i, i);
  }
  for (int j = 0; j < nc; j++) {
    const xrt_ir_type *init = xrt__vtype(v, op->operands[ni + j]);
    if (!xrt__type_equal(&v->func->value_types[r->args[ni + j]], init) ||
        !xrt__type_equal(xrt__vtype(v, op->results[no + j]), init) ||
        !xrt__type_equal(&v->func->value_types[term->operands[no + j]], init))
      return xrt__vfail(v, "carry %d must keep the type of its init", j);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_ctrl(const xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_IF: return xrt__verify_branches(v, true);
  case XRT_OP_CASE: return xrt__verify_branches(v, false);
  case XRT_OP_MAP: return xrt__verify_map(v);
  case XRT_OP_SORT: return xrt__verify_sort(v);
  case XRT_OP_COMPOSITE: return xrt__verify_composite(v);
  case XRT_OP_TUPLE: return xrt__verify_tuple(v);
  case XRT_OP_GET_TUPLE_ELEMENT: return xrt__verify_get_tuple_element(v);
  case XRT_OP_AFTER_ALL: return xrt__verify_after_all(v);
  case XRT_OP_OPTIMIZATION_BARRIER: return xrt__verify_barrier(v);
  case XRT_OP_INFEED: case XRT_OP_RECV: return xrt__verify_io(v, true);
  case XRT_OP_OUTFEED: case XRT_OP_SEND: return xrt__verify_io(v, false);
  case XRT_OP_CHLO_SCAN: return xrt__verify_scan(v);
  default: return XRT_OK;
  }
}
/* ----------------------------------------------------------------------
 * Verifier constraints of the linalg op family: convolution, dynamic_conv,
 * fft, triangular_solve, cholesky, the batch_norm ops, rng,
 * rng_bit_generator and chlo.ragged_dot (spec "Constraints" sections; Cn
 * below are the spec's numbers). Returns XRT_OK for ops of other families.
 * -------------------------------------------------------------------- */

#define XRT__LA_BIG ((int64_t)1 << 40) /* larger window values cannot
                                          describe a real tensor */

static bool xrt__la_quant(const xrt__vctx *v, int32_t id) {
  return xrt__vtype(v, id)->quant != NULL;
}

static bool xrt__la_int(xrt_dtype t) {
  return xrt_dtype_is_signed_int(t) || xrt_dtype_is_unsigned_int(t);
}

static bool xrt__la_float(xrt_dtype t) { return xrt_dtype_is_float(t); }

/* An optional list attribute of n entries, each in [lo, hi]; absent gives
 * dflt.  Boolean lists (window_reversal) come as 0/1 integers. */
static xrt_status xrt__la_list(const xrt__vctx *v, const char *name,
                               int64_t n, int64_t lo, int64_t hi,
                               int64_t dflt, int64_t *out) {
  const int64_t *x;
  int64_t k;
  xrt_status s = xrt__vints(v, name, true, &x, &k);
  if (s) return s;
  if (x && k != n)
    return xrt__vfail(v, "%s must have %" PRId64 " entries, not %" PRId64,
                      name, n, k);
  for (int64_t i = 0; i < n; i++) {
    out[i] = x ? x[i] : dflt;
    if (out[i] < lo || out[i] > hi)
      return xrt__vfail(v, "%s[%" PRId64 "] = %" PRId64 " is out of range",
                        name, i, out[i]);
  }
  return XRT_OK;
}

/* An optional integer attribute; absent gives dflt. */
static xrt_status xrt__la_int_attr(const xrt__vctx *v, const char *name,
                                   int64_t dflt, int64_t *out) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  *out = dflt;
  if (!a) return XRT_OK;
  if (a->kind != XRT_ATTR_INT)
    return xrt__vfail(v, "attribute '%s' must be an integer", name);
  *out = a->i;
  return XRT_OK;
}

/* An optional boolean attribute (BOOL or INT 0/1). */
static xrt_status xrt__la_bool(const xrt__vctx *v, const char *name,
                               bool *out) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  *out = false;
  if (!a) return XRT_OK;
  if (a->kind != XRT_ATTR_BOOL && a->kind != XRT_ATTR_INT)
    return xrt__vfail(v, "attribute '%s' must be a boolean", name);
  *out = a->i != 0;
  return XRT_OK;
}

/* An enum attribute that must be one of names; returns its index. */
static xrt_status xrt__la_enum(const xrt__vctx *v, const char *name,
                               const char *const *names, int n, int *out) {
  const xrt_ir_attr *a = xrt_ir_op_attr(v->op, name);
  if (!a || (a->kind != XRT_ATTR_ENUM && a->kind != XRT_ATTR_STRING) || !a->s)
    return xrt__vfail(v, "missing enum attribute '%s'", name);
  for (int i = 0; i < n; i++)
    if (strcmp(a->s, names[i]) == 0) {
      *out = i;
      return XRT_OK;
    }
  return xrt__vfail(v, "'%s' is not a valid %s", a->s, name);
}

/* ---- convolution, dynamic_conv ---- */

typedef struct xrt__la_conv {
  int64_t ib, ifd, isp[XRT_MAX_RANK];
  int64_t kif, kof, ksp[XRT_MAX_RANK];
  int64_t ob, ofd, osp[XRT_MAX_RANK];
} xrt__la_conv;

static xrt_status xrt__la_dn_int(const xrt__vctx *v, const xrt_ir_attr *dn,
                                 const char *name, int64_t *out) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  if (!a || a->kind != XRT_ATTR_INT)
    return xrt__vfail(v, "dimension_numbers needs the integer %s", name);
  *out = a->i;
  return XRT_OK;
}

static xrt_status xrt__la_dn_list(const xrt__vctx *v, const xrt_ir_attr *dn,
                                  const char *name, int64_t n, int64_t *out) {
  const xrt_ir_attr *a = xrt_ir_attr_field(dn, name);
  if (!a || a->kind != XRT_ATTR_INTS)
    return xrt__vfail(v, "dimension_numbers needs the list %s", name);
  if (a->n != n) /* C13, C18, C20 */
    return xrt__vfail(v, "%s must have %" PRId64 " entries, not %" PRId64,
                      name, n, a->n);
  for (int64_t i = 0; i < n; i++) out[i] = a->ints[i];
  return XRT_OK;
}

/* [first] + spatial + [last] is a permutation of 0..N-1 (C14, C19, C21). */
static xrt_status xrt__la_perm(const xrt__vctx *v, const char *what,
                               int64_t first, const int64_t *sp, int64_t last,
                               int64_t N) {
  int64_t all[XRT_MAX_RANK + 2];
  all[0] = first;
  for (int64_t i = 0; i < N - 2; i++) all[1 + i] = sp[i];
  all[N - 1] = last;
  return xrt__vdims(v, what, all, N, N);
}

static xrt_status xrt__la_conv_dn(const xrt__vctx *v, int64_t N,
                                  xrt__la_conv *c) {
  const xrt_ir_attr *dn = xrt__vattr(v, "dimension_numbers", XRT_ATTR_DICT);
  xrt_status s;
  if (!dn) return xrt__vfail(v, "missing dimension_numbers");
  if ((s = xrt__la_dn_int(v, dn, "input_batch_dimension", &c->ib)) ||
      (s = xrt__la_dn_int(v, dn, "input_feature_dimension", &c->ifd)) ||
      (s = xrt__la_dn_list(v, dn, "input_spatial_dimensions", N - 2, c->isp)) ||
      (s = xrt__la_dn_int(v, dn, "kernel_input_feature_dimension", &c->kif)) ||
      (s = xrt__la_dn_int(v, dn, "kernel_output_feature_dimension", &c->kof)) ||
      (s = xrt__la_dn_list(v, dn, "kernel_spatial_dimensions", N - 2,
                           c->ksp)) ||
      (s = xrt__la_dn_int(v, dn, "output_batch_dimension", &c->ob)) ||
      (s = xrt__la_dn_int(v, dn, "output_feature_dimension", &c->ofd)) ||
      (s = xrt__la_dn_list(v, dn, "output_spatial_dimensions", N - 2,
                           c->osp)))
    return s;
  if ((s = xrt__la_perm(v, "input dimensions", c->ib, c->isp, c->ifd, N)) ||
      (s = xrt__la_perm(v, "kernel dimensions", c->kif, c->ksp, c->kof, N)))
    return s;
  return xrt__la_perm(v, "output dimensions", c->ob, c->osp, c->ofd, N);
}

/* C26: num_windows of one spatial dimension. */
static int64_t xrt__la_windows(int64_t in, int64_t k, int64_t lo, int64_t hi,
                               int64_t ld, int64_t rd, int64_t ws) {
  int64_t dil = in == 0 ? 0 : (in - 1) * ld + 1;
  int64_t padded = lo + dil + hi;
  int64_t win = k == 0 ? 0 : (k - 1) * rd + 1;
  if (padded <= 0 || win > padded) return 0;
  return (padded - win) / ws + 1;
}

static xrt_status xrt__la_padding(const xrt__vctx *v, int64_t ns,
                                  bool dynamic, int64_t *pad) {
  if (dynamic) {
    const xrt_shape *p = xrt__operand(v, 2);
    if (p->rank != 2 || p->dims[0] != ns || p->dims[1] != 2 ||
        !xrt__la_int(p->dtype))
      return xrt__vfail(v, "padding must be an integer tensor<%" PRId64
                        "x2>", ns);
    return XRT_OK;
  }
  const int64_t *x;
  int64_t k;
  xrt_status s = xrt__vints(v, "padding", true, &x, &k);
  if (s) return s;
  if (x && k != 2 * ns) /* C5 */
    return xrt__vfail(v, "padding must have %" PRId64 "x2 entries", ns);
  for (int64_t i = 0; i < 2 * ns; i++) {
    pad[i] = x ? x[i] : 0;
    if (pad[i] <= -XRT__LA_BIG || pad[i] >= XRT__LA_BIG)
      return xrt__vfail(v, "padding entry %" PRId64 " is out of range", i);
  }
  return XRT_OK;
}

/* C11, C12, C15-C17, C22-C24. */
static xrt_status xrt__la_groups(const xrt__vctx *v, const xrt__la_conv *c,
                                 int64_t *fg, int64_t *bg) {
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  xrt_status s;
  if ((s = xrt__la_int_attr(v, "feature_group_count", 1, fg)) ||
      (s = xrt__la_int_attr(v, "batch_group_count", 1, bg)))
    return s;
  if (*fg < 1 || *bg < 1)
    return xrt__vfail(v, "feature_group_count and batch_group_count must be "
                         "positive");
  if (*fg > 1 && *bg > 1)
    return xrt__vfail(v, "feature_group_count and batch_group_count cannot "
                         "both exceed 1");
  int64_t in_f = l->dims[c->ifd], out_f = r->dims[c->kof];
  if (l->dims[c->ib] % *bg)
    return xrt__vfail(v, "input batch size %" PRId64 " is not a multiple of "
                      "batch_group_count %" PRId64, l->dims[c->ib], *bg);
  if (in_f % *fg)
    return xrt__vfail(v, "input feature size %" PRId64 " is not a multiple "
                      "of feature_group_count %" PRId64, in_f, *fg);
  if (r->dims[c->kif] != in_f / *fg)
    return xrt__vfail(v, "kernel input feature size %" PRId64 " must be the "
                      "input feature size / feature_group_count = %" PRId64,
                      r->dims[c->kif], in_f / *fg);
  if (out_f % *bg || out_f % *fg)
    return xrt__vfail(v, "kernel output feature size %" PRId64 " is not a "
                      "multiple of the group count", out_f);
  return XRT_OK;
}

static xrt_status xrt__verify_conv(const xrt__vctx *v, bool dynamic) {
  xrt_status s = xrt__vcounts(v, dynamic ? 3 : 2, 1);
  if (s) return s;
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  const xrt_shape *o = xrt__result(v, 0);
  int64_t N = l->rank, ns = N - 2;
  if (N < 2 || r->rank != N || o->rank != N) /* C1, C28 */
    return xrt__vfail(v, "lhs, rhs and result must have the same rank >= 2");
  if (l->dtype != r->dtype && !xrt__la_quant(v, v->op->operands[0]) &&
      !xrt__la_quant(v, v->op->operands[1])) /* C2 */
    return xrt__vfail(v, "lhs and rhs element types differ (%s vs %s)",
                      xrt_dtype_name(l->dtype), xrt_dtype_name(r->dtype));
  xrt__la_conv c;
  int64_t ws[XRT_MAX_RANK], ld[XRT_MAX_RANK], rd[XRT_MAX_RANK];
  int64_t rev[XRT_MAX_RANK], pad[2 * XRT_MAX_RANK], fg, bg;
  if ((s = xrt__la_list(v, "window_strides", ns, 1, XRT__LA_BIG, 1, ws)) ||
      (s = xrt__la_list(v, "lhs_dilation", ns, 1, XRT__LA_BIG, 1, ld)) ||
      (s = xrt__la_list(v, "rhs_dilation", ns, 1, XRT__LA_BIG, 1, rd)) ||
      (s = xrt__la_list(v, "window_reversal", ns, 0, 1, 0, rev)) ||
      (s = xrt__la_padding(v, ns, dynamic, pad)) ||
      (s = xrt__la_conv_dn(v, N, &c)) || (s = xrt__la_groups(v, &c, &fg, &bg)))
    return s;
  const xrt_ir_attr *pc = xrt_ir_op_attr(v->op, "precision_config");
  if (pc && pc->kind == XRT_ATTR_LIST && pc->num_items != 2) /* C25 */
    return xrt__vfail(v, "precision_config must have 2 entries");
  /* C26 */
  if (o->dims[c.ob] != l->dims[c.ib] / bg)
    return xrt__vfail(v, "result batch size must be %" PRId64 ", not %" PRId64,
                      l->dims[c.ib] / bg, o->dims[c.ob]);
  if (o->dims[c.ofd] != r->dims[c.kof])
    return xrt__vfail(v, "result feature size must be %" PRId64 ", not %"
                      PRId64, r->dims[c.kof], o->dims[c.ofd]);
  for (int64_t d = 0; !dynamic && d < ns; d++) {
    int64_t n = xrt__la_windows(l->dims[c.isp[d]], r->dims[c.ksp[d]],
                                pad[2 * d], pad[2 * d + 1], ld[d], rd[d],
                                ws[d]);
    if (o->dims[c.osp[d]] != n)
      return xrt__vfail(v, "result spatial dimension %" PRId64 " must be %"
                        PRId64 " (the number of windows), not %" PRId64,
                        c.osp[d], n, o->dims[c.osp[d]]);
  }
  return XRT_OK;
}

/* ---- fft ---- */

static xrt_status xrt__verify_fft(const xrt__vctx *v) {
  static const char *const types[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  int kind = 0;
  const int64_t *len;
  int64_t nl;
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s || (s = xrt__la_enum(v, "fft_type", types, 4, &kind)) ||
      (s = xrt__vints(v, "fft_length", false, &len, &nl)))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  if (nl < 1 || nl > 3) /* C3 */
    return xrt__vfail(v, "fft_length must have 1 to 3 entries");
  if (in->rank < nl) /* C1 */
    return xrt__vfail(v, "operand rank %d is below size(fft_length) %" PRId64,
                      (int)in->rank, nl);
  xrt_dtype it = in->dtype, ot = out->dtype;
  bool ok = kind < 2 ? xrt_dtype_is_complex(it) && it == ot
          : kind == 2 ? (it == XRT_F32 && ot == XRT_C64) ||
                            (it == XRT_F64 && ot == XRT_C128)
                      : (it == XRT_C64 && ot == XRT_F32) ||
                            (it == XRT_C128 && ot == XRT_F64);
  if (!ok) /* C2 */
    return xrt__vfail(v, "element types %s -> %s do not fit fft_type %s",
                      xrt_dtype_name(it), xrt_dtype_name(ot), types[kind]);
  if (out->rank != in->rank)
    return xrt__vfail(v, "operand and result ranks differ");
  const xrt_shape *real = kind == 2 ? in : kind == 3 ? out : NULL;
  for (int64_t i = 0; i < nl; i++) {
    int64_t d = in->rank - nl + i;
    int64_t have = real ? real->dims[d] : in->dims[d];
    if (len[i] != have) /* C4 (and the transformed sizes of FFT/IFFT) */
      return xrt__vfail(v, "fft_length[%" PRId64 "] = %" PRId64 " does not "
                        "match dimension %" PRId64 " (%" PRId64 ")", i, len[i],
                        d, have);
  }
  for (int32_t d = 0; d < in->rank; d++) { /* C5 */
    int64_t want = in->dims[d];
    if (d == in->rank - 1 && kind == 2) want = want == 0 ? 0 : want / 2 + 1;
    if (d == in->rank - 1 && kind == 3) {
      int64_t h = out->dims[d] == 0 ? 0 : out->dims[d] / 2 + 1;
      if (in->dims[d] != h)
        return xrt__vfail(v, "IRFFT operand's last dimension must be %" PRId64,
                          h);
      continue;
    }
    if (out->dims[d] != want)
      return xrt__vfail(v, "result dimension %d must be %" PRId64 ", not %"
                        PRId64, (int)d, want, out->dims[d]);
  }
  return XRT_OK;
}

/* ---- triangular_solve, cholesky ---- */

static bool xrt__la_fc(xrt_dtype t) {
  return xrt_dtype_is_float(t) || xrt_dtype_is_complex(t);
}

/* The spec lets these ops take per-tensor (not per-axis) quantized tensors. */
static bool xrt__la_per_tensor_quant(const xrt__vctx *v, int32_t id) {
  const xrt_ir_quant *q = xrt__vtype(v, id)->quant;
  return q && q->axis < 0;
}

static xrt_status xrt__verify_triangular_solve(const xrt__vctx *v) {
  static const char *const tr[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  int t = 0;
  bool left = false, b1, b2;
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s || (s = xrt__la_enum(v, "transpose_a", tr, 3, &t)) ||
      (s = xrt__la_bool(v, "left_side", &left)) ||
      (s = xrt__la_bool(v, "lower", &b1)) ||
      (s = xrt__la_bool(v, "unit_diagonal", &b2)))
    return s;
  const xrt_shape *a = xrt__operand(v, 0), *b = xrt__operand(v, 1);
  int32_t R = a->rank;
  if (a->dtype != b->dtype) /* C1 */
    return xrt__vfail(v, "a and b element types differ");
  if (!xrt__la_fc(a->dtype) && !xrt__la_per_tensor_quant(v, v->op->operands[0]))
    return xrt__vfail(v, "element type %s is not floating-point, complex or "
                      "per-tensor quantized", xrt_dtype_name(a->dtype));
  if (R < 2 || b->rank != R) /* C2 */
    return xrt__vfail(v, "a and b must have the same rank >= 2");
  for (int32_t d = 0; d < R - 2; d++) /* C3 */
    if (a->dims[d] != b->dims[d])
      return xrt__vfail(v, "batch dimension %d of a and b differ", (int)d);
  if (a->dims[R - 1] != a->dims[R - 2]) /* C4 */
    return xrt__vfail(v, "a must be square in its last two dimensions");
  int64_t bd = b->dims[left ? R - 2 : R - 1];
  if (bd != a->dims[R - 1]) /* C4 */
    return xrt__vfail(v, "dimension %d of b is %" PRId64 ", expected %"
                      PRId64 " for left_side = %s", left ? R - 2 : R - 1, bd,
                      a->dims[R - 1], left ? "true" : "false");
  return xrt__vsame(v, v->op->operands[1], v->op->results[0],
                    "result type differs from b"); /* C5 */
}

static xrt_status xrt__verify_cholesky(const xrt__vctx *v) {
  bool lower;
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s || (s = xrt__la_bool(v, "lower", &lower))) return s;
  const xrt_shape *a = xrt__operand(v, 0);
  if (!xrt__la_fc(a->dtype) && !xrt__la_per_tensor_quant(v, v->op->operands[0]))
    return xrt__vfail(v, "element type %s is not floating-point, complex or "
                      "per-tensor quantized", xrt_dtype_name(a->dtype));
  if (a->rank < 2) return xrt__vfail(v, "a must have rank >= 2"); /* C2 */
  if (a->dims[a->rank - 1] != a->dims[a->rank - 2]) /* C3 */
    return xrt__vfail(v, "a must be square in its last two dimensions");
  return xrt__vsame(v, v->op->operands[0], v->op->results[0],
                    "result type differs from a"); /* C1 */
}

/* ---- batch_norm_* ---- */

/* Operand/result i is the full tensor when bit i of full is set, else a
 * 1-D tensor of the feature size; all share the element type. */
static xrt_status xrt__verify_batch_norm(const xrt__vctx *v, int nops,
                                         int nres, unsigned full) {
  int64_t fi;
  xrt_status s = xrt__vcounts(v, nops, nres);
  if (s) return s;
  const xrt_ir_attr *e = xrt_ir_op_attr(v->op, "epsilon");
  if (!e || e->kind != XRT_ATTR_FLOAT)
    return xrt__vfail(v, "missing float attribute 'epsilon'");
  const xrt_ir_attr *f = xrt__vattr(v, "feature_index", XRT_ATTR_INT);
  if (!f) return xrt__vfail(v, "missing integer attribute 'feature_index'");
  fi = f->i;
  const xrt_shape *x = xrt__operand(v, 0);
  if (fi < 0 || fi >= x->rank) /* C1 */
    return xrt__vfail(v, "feature_index %" PRId64 " is out of range for rank "
                      "%d", fi, (int)x->rank);
  if (!xrt__la_float(x->dtype) &&
      !xrt__la_per_tensor_quant(v, v->op->operands[0]))
    return xrt__vfail(v, "element type %s is not floating-point or "
                      "per-tensor quantized", xrt_dtype_name(x->dtype));
  for (int i = 0; i < nops + nres; i++) {
    int32_t id = i < nops ? v->op->operands[i] : v->op->results[i - nops];
    const xrt_shape *t = xrt__vshape(v, id);
    const char *what = i < nops ? "operand" : "result";
    int k = i < nops ? i : i - nops;
    if (t->dtype != x->dtype) /* C2 */
      return xrt__vfail(v, "%s %d has element type %s, expected %s", what, k,
                        xrt_dtype_name(t->dtype), xrt_dtype_name(x->dtype));
    if ((full >> i) & 1u) {
      if (!xrt__same_dims(t, x))
        return xrt__vfail(v, "%s %d must have the operand's shape", what, k);
    } else if (t->rank != 1 || t->dims[0] != x->dims[fi]) {
      return xrt__vfail(v, "%s %d must be 1-D of size dim(operand, "
                        "feature_index) = %" PRId64, what, k, x->dims[fi]);
    }
  }
  return XRT_OK;
}

/* ---- rng, rng_bit_generator ---- */

static xrt_status xrt__verify_rng(const xrt__vctx *v) {
  static const char *const dist[] = {"UNIFORM", "NORMAL"};
  int kind = 0;
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s || (s = xrt__la_enum(v, "rng_distribution", dist, 2, &kind))) return s;
  const xrt_shape *a = xrt__operand(v, 0), *b = xrt__operand(v, 1);
  const xrt_shape *sh = xrt__operand(v, 2), *o = xrt__result(v, 0);
  if (a->rank != 0 || b->rank != 0)
    return xrt__vfail(v, "a and b must be 0-dimensional");
  if (a->dtype != o->dtype || b->dtype != o->dtype) /* C1 */
    return xrt__vfail(v, "a, b and result must have the same element type");
  if (kind == 1 && !xrt__la_float(o->dtype)) /* C2 */
    return xrt__vfail(v, "NORMAL needs a floating-point element type");
  if (!(kind == 0 && (xrt__la_int(o->dtype) || o->dtype == XRT_PRED)) &&
      !xrt__la_float(o->dtype))
    return xrt__vfail(v, "element type %s is not allowed",
                      xrt_dtype_name(o->dtype));
  if (sh->rank != 1 || !xrt__la_int(sh->dtype) || sh->dims[0] != o->rank)
    return xrt__vfail(v, "shape must be a 1-D integer tensor of %d entries",
                      (int)o->rank); /* C3 */
  return XRT_OK;
}

static xrt_status xrt__verify_rng_bit_generator(const xrt__vctx *v) {
  static const char *const algs[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
  int alg = 0;
  xrt_status s = xrt__vcounts(v, 1, 2);
  if (s || (s = xrt__la_enum(v, "rng_algorithm", algs, 3, &alg))) return s;
  const xrt_shape *st = xrt__operand(v, 0), *o = xrt__result(v, 1);
  if (st->rank != 1 || st->dtype != XRT_U64)
    return xrt__vfail(v, "initial_state must be a 1-D ui64 tensor");
  int64_t n = st->dims[0];
  if (alg == 1 ? n != 2 : n != 2 && n != 3) /* C2 */
    return xrt__vfail(v, "initial_state must have %s entries for %s, not %"
                      PRId64, alg == 1 ? "2" : "2 or 3", algs[alg], n);
  if ((s = xrt__vsame(v, v->op->operands[0], v->op->results[0],
                      "output_state type differs from initial_state")))
    return s; /* C1 */
  if (!xrt__la_int(o->dtype) && !xrt__la_float(o->dtype))
    return xrt__vfail(v, "output must have an integer or floating-point "
                         "element type, not %s", xrt_dtype_name(o->dtype));
  return XRT_OK;
}

/* ---- chlo.ragged_dot ---- */

/* Expected result: [groups (mode 2)] + batch + lhs free + rhs free. */
static xrt_status xrt__la_rd_result(const xrt__vctx *v, const int64_t *lb,
                                    const int64_t *lc, int64_t nb, int64_t nc,
                                    const int64_t *rb, const int64_t *rc,
                                    const int64_t *rg, int64_t ng,
                                    int64_t groups) {
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  const xrt_shape *o = xrt__result(v, 0);
  int64_t want[3 * XRT_MAX_RANK];
  int k = 0;
  if (groups >= 0) want[k++] = groups;
  for (int64_t i = 0; i < nb; i++) want[k++] = l->dims[lb[i]];
  for (int32_t d = 0; d < l->rank; d++)
    if (!xrt__contains(lb, nb, d) && !xrt__contains(lc, nc, d))
      want[k++] = l->dims[d];
  for (int32_t d = 0; d < r->rank; d++)
    if (!xrt__contains(rb, nb, d) && !xrt__contains(rc, nc, d) &&
        !xrt__contains(rg, ng, d))
      want[k++] = r->dims[d];
  bool ok = o->rank == k;
  for (int i = 0; ok && i < k; i++) ok = o->dims[i] == want[i];
  if (!ok)
    return xrt__vfail(v, "result shape does not follow from the operands and "
                         "ragged_dot_dimension_numbers");
  return XRT_OK;
}

static xrt_status xrt__verify_ragged_dot(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 3, 1);
  if (s) return s;
  const xrt_ir_attr *dn =
      xrt__vattr(v, "ragged_dot_dimension_numbers", XRT_ATTR_DICT);
  if (!dn) return xrt__vfail(v, "missing ragged_dot_dimension_numbers");
  const int64_t *lb, *rb, *lc, *rc, *lr, *rg;
  int64_t nlb, nrb, nlc, nrc, nlr, nrg;
  if ((s = xrt__vfield(v, dn, "lhs_batching_dimensions", &lb, &nlb)) ||
      (s = xrt__vfield(v, dn, "rhs_batching_dimensions", &rb, &nrb)) ||
      (s = xrt__vfield(v, dn, "lhs_contracting_dimensions", &lc, &nlc)) ||
      (s = xrt__vfield(v, dn, "rhs_contracting_dimensions", &rc, &nrc)) ||
      (s = xrt__vfield(v, dn, "lhs_ragged_dimensions", &lr, &nlr)) ||
      (s = xrt__vfield(v, dn, "rhs_group_dimensions", &rg, &nrg)))
    return s;
  const xrt_shape *l = xrt__operand(v, 0), *r = xrt__operand(v, 1);
  const xrt_shape *gs = xrt__operand(v, 2);
  if (nlb != nrb || nlc != nrc)
    return xrt__vfail(v, "lhs and rhs need as many batching and contracting "
                         "dimensions");
  if (nlb + nlc > XRT_MAX_RANK || nrb + nrc + nrg > XRT_MAX_RANK)
    return xrt__vfail(v, "too many dimensions");
  int64_t ld[XRT_MAX_RANK], rd[XRT_MAX_RANK + 1];
  for (int64_t i = 0; i < nlb; i++) ld[i] = lb[i], rd[i] = rb[i];
  for (int64_t i = 0; i < nlc; i++) ld[nlb + i] = lc[i], rd[nrb + i] = rc[i];
  for (int64_t i = 0; i < nrg; i++) rd[nrb + nrc + i] = rg[i];
  if ((s = xrt__vdims(v, "lhs dimensions", ld, nlb + nlc, l->rank)) ||
      (s = xrt__vdims(v, "rhs dimensions", rd, nrb + nrc + nrg, r->rank)))
    return s;
  for (int64_t i = 0; i < nlb + nlc; i++)
    if (l->dims[ld[i]] != r->dims[rd[i]])
      return xrt__vfail(v, "%s dimension sizes differ: lhs %" PRId64
                        " vs rhs %" PRId64, i < nlb ? "batching"
                        : "contracting", l->dims[ld[i]], r->dims[rd[i]]);
  if (nlr != 1) return xrt__vfail(v, "exactly one lhs_ragged_dimensions");
  if (lr[0] < 0 || lr[0] >= l->rank)
    return xrt__vfail(v, "lhs ragged dimension %" PRId64 " is out of range",
                      lr[0]);
  if (gs->rank != 1 || !xrt__la_int(gs->dtype))
    return xrt__vfail(v, "group_sizes must be a 1-D integer tensor");
  if (l->dtype != r->dtype)
    return xrt__vfail(v, "lhs and rhs element types differ");
  int64_t g = gs->dims[0];
  if (xrt__contains(lc, nlc, lr[0]) || xrt__contains(lb, nlb, lr[0])) {
    if (nrg != 0)
      return xrt__vfail(v, "rhs_group_dimensions must be empty when the "
                           "ragged dimension is a batching or contracting "
                           "one");
    return xrt__la_rd_result(v, lb, lc, nlb, nlc, rb, rc, rg, nrg,
                             xrt__contains(lc, nlc, lr[0]) ? g : -1);
  }
  if (nrg != 1)
    return xrt__vfail(v, "a ragged non-contracting dimension needs one "
                         "rhs_group_dimensions");
  if (r->dims[rg[0]] != g)
    return xrt__vfail(v, "rhs group dimension has size %" PRId64 ", "
                      "group_sizes %" PRId64, r->dims[rg[0]], g);
  return xrt__la_rd_result(v, lb, lc, nlb, nlc, rb, rc, rg, nrg, -1);
}

static xrt_status xrt__verify_linalg(const xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_CONVOLUTION: return xrt__verify_conv(v, false);
  case XRT_OP_DYNAMIC_CONV: return xrt__verify_conv(v, true);
  case XRT_OP_FFT: return xrt__verify_fft(v);
  case XRT_OP_TRIANGULAR_SOLVE: return xrt__verify_triangular_solve(v);
  case XRT_OP_CHOLESKY: return xrt__verify_cholesky(v);
  case XRT_OP_BATCH_NORM_INFERENCE: return xrt__verify_batch_norm(v, 5, 1, 0x21u);
  case XRT_OP_BATCH_NORM_TRAINING: return xrt__verify_batch_norm(v, 3, 3, 0x09u);
  case XRT_OP_BATCH_NORM_GRAD: return xrt__verify_batch_norm(v, 5, 3, 0x31u);
  case XRT_OP_RNG: return xrt__verify_rng(v);
  case XRT_OP_RNG_BIT_GENERATOR: return xrt__verify_rng_bit_generator(v);
  case XRT_OP_CHLO_RAGGED_DOT: return xrt__verify_ragged_dot(v);
  default: return XRT_OK;
  }
}
/* ----------------------------------------------------------------------
 * Verifier constraints of the types op family: uniform_quantize,
 * uniform_dequantize, reduce_precision, chlo.mulhi, and the quantized
 * forms of elementwise ops. Returns XRT_OK for ops of other families.
 * -------------------------------------------------------------------- */

/* The spec's constraints on a !quant.uniform element type of value id
 * (Types: quantized element types, C1-C10, and per-axis C11-C12). */
static xrt_status xrt__vquant(const xrt__vctx *v, int32_t id, const char *what) {
  const xrt_ir_type *t = xrt__vtype(v, id);
  const xrt_ir_quant *q = t->quant;
  if (!q) return XRT_OK;
  int sk = xrt__dtype_class(q->storage);
  if (sk != XRT__K_SINT && sk != XRT__K_UINT)
    return xrt__vfail(v, "%s: quantized storage type must be an integer type, "
                      "not %s", what, xrt_dtype_name(q->storage));
  if (!xrt_dtype_is_float(q->expressed))
    return xrt__vfail(v, "%s: quantized expressed type must be a float type, "
                      "not %s", what, xrt_dtype_name(q->expressed));
  if (t->shape.dtype != q->storage)
    return xrt__vfail(v, "%s: element type %s differs from the storage type "
                      "%s", what, xrt_dtype_name(t->shape.dtype),
                      xrt_dtype_name(q->storage));
  int sb = xrt_dtype_bits(q->storage);
  if (sb >= xrt_dtype_bits(q->expressed))
    return xrt__vfail(v, "%s: storage type %s must be narrower than the "
                      "expressed type %s", what, xrt_dtype_name(q->storage),
                      xrt_dtype_name(q->expressed));
  int64_t lo = 0, hi = 0;
  if (sk == XRT__K_SINT) {
    lo = sb >= 64 ? INT64_MIN : -((int64_t)1 << (sb - 1));
    hi = sb >= 64 ? INT64_MAX : ((int64_t)1 << (sb - 1)) - 1;
  } else {
    hi = sb >= 63 ? INT64_MAX : ((int64_t)1 << sb) - 1;
  }
  if (q->storage_min < lo || q->storage_max > hi ||
      q->storage_min >= q->storage_max)
    return xrt__vfail(v, "%s: storage range [%" PRId64 ", %" PRId64 "] does "
                      "not fit %s", what, q->storage_min, q->storage_max,
                      xrt_dtype_name(q->storage));
  if (q->num_scales < 1 || !q->scales || !q->zero_points)
    return xrt__vfail(v, "%s: quantized type without scales", what);
  for (int32_t i = 0; i < q->num_scales; i++) {
    if (!(q->scales[i] > 0) || !isfinite(q->scales[i]))
      return xrt__vfail(v, "%s: scale %g must be positive and finite", what,
                        q->scales[i]);
    if (q->zero_points[i] < q->storage_min ||
        q->zero_points[i] > q->storage_max)
      return xrt__vfail(v, "%s: zero point %" PRId64 " is outside the storage "
                        "range [%" PRId64 ", %" PRId64 "]", what,
                        q->zero_points[i], q->storage_min, q->storage_max);
  }
  if (q->axis < 0) {
    if (q->num_scales != 1)
      return xrt__vfail(v, "%s: per-tensor quantization needs one scale, got "
                        "%d", what, (int)q->num_scales);
    return XRT_OK;
  }
  if (q->axis >= t->shape.rank)
    return xrt__vfail(v, "%s: quantization dimension %d is out of range for "
                      "rank %d", what, (int)q->axis, (int)t->shape.rank);
  if (t->shape.dims[q->axis] != q->num_scales)
    return xrt__vfail(v, "%s: %d scales for quantization dimension %d of size "
                      "%" PRId64, what, (int)q->num_scales, (int)q->axis,
                      t->shape.dims[q->axis]);
  return XRT_OK;
}

static bool xrt__vsame_dims_ids(const xrt__vctx *v, int32_t a, int32_t b) {
  const xrt_shape *x = xrt__vshape(v, a), *y = xrt__vshape(v, b);
  if (x->rank != y->rank) return false;
  for (int32_t i = 0; i < x->rank; i++)
    if (x->dims[i] != y->dims[i]) return false;
  return true;
}

static xrt_status xrt__verify_uniform_quantize(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  int32_t in = v->op->operands[0], out = v->op->results[0];
  const xrt_ir_quant *qi = xrt__vtype(v, in)->quant;
  const xrt_ir_quant *qo = xrt__vtype(v, out)->quant;
  if ((s = xrt__vquant(v, in, "operand")) || (s = xrt__vquant(v, out, "result")))
    return s;
  if (!qo) return xrt__vfail(v, "result must be a quantized tensor");
  xrt_dtype it = xrt__vshape(v, in)->dtype;
  if (!qi && !xrt_dtype_is_float(it))
    return xrt__vfail(v, "operand must be a float or quantized tensor, not %s",
                      xrt_dtype_name(it));
  if (!xrt__vsame_dims_ids(v, in, out))
    return xrt__vfail(v, "operand and result shapes differ");
  xrt_dtype want = qi ? qi->expressed : it;
  if (qo->expressed != want)
    return xrt__vfail(v, "result expressed type %s must be %s",
                      xrt_dtype_name(qo->expressed), xrt_dtype_name(want));
  return XRT_OK;
}

static xrt_status xrt__verify_uniform_dequantize(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  int32_t in = v->op->operands[0], out = v->op->results[0];
  const xrt_ir_quant *qi = xrt__vtype(v, in)->quant;
  if ((s = xrt__vquant(v, in, "operand"))) return s;
  if (!qi) return xrt__vfail(v, "operand must be a quantized tensor");
  if (xrt__vtype(v, out)->quant)
    return xrt__vfail(v, "result must not be quantized");
  if (!xrt__vsame_dims_ids(v, in, out))
    return xrt__vfail(v, "operand and result shapes differ");
  if (xrt__vshape(v, out)->dtype != qi->expressed)
    return xrt__vfail(v, "result element type %s must be the expressed type "
                      "%s", xrt_dtype_name(xrt__vshape(v, out)->dtype),
                      xrt_dtype_name(qi->expressed));
  return XRT_OK;
}

static xrt_status xrt__verify_reduce_precision(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  int32_t in = v->op->operands[0], out = v->op->results[0];
  const xrt_ir_quant *q = xrt__vtype(v, in)->quant;
  if ((s = xrt__vquant(v, in, "operand")) || (s = xrt__vquant(v, out, "result")))
    return s;
  xrt_dtype t = xrt__vshape(v, in)->dtype;
  if (q ? q->axis >= 0 : !xrt_dtype_is_float(t))
    return xrt__vfail(v, "operand must be a float or per-tensor quantized "
                      "tensor, not %s", xrt_dtype_name(t));
  if ((s = xrt__vsame(v, in, out, "result type differs from operand type")))
    return s;
  const xrt_ir_attr *e = xrt__vattr(v, "exponent_bits", XRT_ATTR_INT);
  const xrt_ir_attr *m = xrt__vattr(v, "mantissa_bits", XRT_ATTR_INT);
  if (!e || !m)
    return xrt__vfail(v, "needs integer attributes 'exponent_bits' and "
                      "'mantissa_bits'");
  if (e->i < 1)
    return xrt__vfail(v, "exponent_bits must be >= 1, got %" PRId64, e->i);
  if (m->i < 0)
    return xrt__vfail(v, "mantissa_bits must be >= 0, got %" PRId64, m->i);
  return XRT_OK;
}

static xrt_status xrt__verify_mulhi(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s) return s;
  if ((s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                      "operand types differ")) ||
      (s = xrt__vsame(v, v->op->operands[0], v->op->results[0],
                      "result type differs from operand type")))
    return s;
  xrt_dtype t = xrt__operand(v, 0)->dtype;
  int k = xrt__dtype_class(t);
  if ((k != XRT__K_SINT && k != XRT__K_UINT) ||
      xrt__vtype(v, v->op->operands[0])->quant)
    return xrt__vfail(v, "element type %s is not an integer type",
                      xrt_dtype_name(t));
  return XRT_OK;
}

/* Elementwise ops on quantized tensors (spec: e.g. add C2): every operand
 * and the result are quantized (compare: the result is i1) with the same
 * storage and expressed types, and a per-axis operand is quantized along
 * the result's dimension.  Plain tensors are xrt.c's business. */
static xrt_status xrt__verify_quant_elementwise(const xrt__vctx *v) {
  const xrt_ir_op *op = v->op;
  bool any = false;
  for (int32_t i = 0; i < op->num_operands + op->num_results; i++) {
    int32_t id = i < op->num_operands ? op->operands[i]
                                      : op->results[i - op->num_operands];
    if (xrt__vtype(v, id)->kind == XRT_TYPE_TENSOR && xrt__vtype(v, id)->quant)
      any = true;
  }
  if (!any || op->num_results != 1) return XRT_OK;
  bool cmp = op->code == XRT_OP_COMPARE;
  int32_t res = op->results[0];
  const xrt_ir_quant *qr = xrt__vtype(v, res)->quant;
  xrt_status s = xrt__vquant(v, res, "result");
  if (s) return s;
  if (cmp ? (qr || xrt__vshape(v, res)->dtype != XRT_PRED) : !qr)
    return xrt__vfail(v, cmp ? "result of a quantized compare must be i1"
                             : "operands and result must all be quantized");
  const xrt_ir_quant *q0 = NULL;
  for (int32_t i = 0; i < op->num_operands; i++) {
    int32_t id = op->operands[i];
    const xrt_ir_quant *q = xrt__vtype(v, id)->quant;
    if ((s = xrt__vquant(v, id, "operand"))) return s;
    if (!q) return xrt__vfail(v, "operands and result must all be quantized");
    if (!xrt__vsame_dims_ids(v, id, res))
      return xrt__vfail(v, "operand %d and result shapes differ", (int)i);
    if (!q0) q0 = q;
    if (q->storage != q0->storage || q->expressed != q0->expressed ||
        (qr && (q->storage != qr->storage || q->expressed != qr->expressed)))
      return xrt__vfail(v, "quantized operands and result need the same "
                        "storage and expressed types");
    if (qr && q->axis >= 0 && q->axis != qr->axis)
      return xrt__vfail(v, "operand %d is quantized along dimension %d, the "
                        "result along %d", (int)i, (int)q->axis, (int)qr->axis);
  }
  return XRT_OK;
}

static xrt_status xrt__verify_types(const xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_UNIFORM_QUANTIZE: return xrt__verify_uniform_quantize(v);
  case XRT_OP_UNIFORM_DEQUANTIZE: return xrt__verify_uniform_dequantize(v);
  case XRT_OP_REDUCE_PRECISION: return xrt__verify_reduce_precision(v);
  case XRT_OP_CHLO_MULHI: return xrt__verify_mulhi(v);
  case XRT_OP_ADD: case XRT_OP_SUBTRACT: case XRT_OP_MULTIPLY:
  case XRT_OP_DIVIDE: case XRT_OP_REMAINDER: case XRT_OP_MAXIMUM:
  case XRT_OP_MINIMUM: case XRT_OP_POWER: case XRT_OP_ATAN2:
  case XRT_OP_NEGATE: case XRT_OP_ABS: case XRT_OP_SIGN:
  case XRT_OP_EXPONENTIAL: case XRT_OP_EXPONENTIAL_MINUS_ONE:
  case XRT_OP_LOG: case XRT_OP_LOG_PLUS_ONE: case XRT_OP_LOGISTIC:
  case XRT_OP_SQRT: case XRT_OP_RSQRT: case XRT_OP_CBRT: case XRT_OP_TANH:
  case XRT_OP_SINE: case XRT_OP_COSINE: case XRT_OP_TAN:
  case XRT_OP_FLOOR: case XRT_OP_CEIL: case XRT_OP_ROUND_NEAREST_AFZ:
  case XRT_OP_ROUND_NEAREST_EVEN: case XRT_OP_COMPARE:
    /* reached once xrt.c's elementwise checks pass quantized ops on */
    return xrt__verify_quant_elementwise(v);
  default: return XRT_OK;
  }
}

/* is_finite, real, imag: a float or complex operand, the result's element
 * type as the spec derives it, and the operand's shape. */
static xrt_status xrt__verify_float_unary(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 1, 1);
  if (s) return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  xrt_dtype t = in->dtype, want;
  bool cplx = xrt_dtype_is_complex(t);
  if (!cplx && !xrt_dtype_is_float(t) && !xrt__vtype(v, v->op->operands[0])->quant)
    return xrt__vfail(v, "operand must be a float or complex tensor, not %s",
                      xrt_dtype_name(t));
  if (v->op->code == XRT_OP_IS_FINITE) {
    if (cplx) return xrt__vfail(v, "operand must be a float tensor");
    want = XRT_PRED;
  } else {
    want = t == XRT_C64 ? XRT_F32 : t == XRT_C128 ? XRT_F64 : t;
  }
  if (out->dtype != want || !xrt__same_dims(in, out))
    return xrt__vfail(v, "result must be tensor of %s with the operand's shape",
                      xrt_dtype_name(want));
  return XRT_OK;
}

static xrt_status xrt__verify_complex(const xrt__vctx *v) {
  xrt_status s = xrt__vcounts(v, 2, 1);
  if (s || (s = xrt__vsame(v, v->op->operands[0], v->op->operands[1],
                           "operand types differ")))
    return s;
  const xrt_shape *in = xrt__operand(v, 0), *out = xrt__result(v, 0);
  xrt_dtype want = in->dtype == XRT_F32 ? XRT_C64
                 : in->dtype == XRT_F64 ? XRT_C128 : XRT_DTYPE_INVALID;
  if (!want) return xrt__vfail(v, "operands must be f32 or f64");
  if (out->dtype != want || !xrt__same_dims(in, out))
    return xrt__vfail(v, "result must be tensor of %s with the operands' shape",
                      xrt_dtype_name(want));
  return XRT_OK;
}

static xrt_status xrt__verify_op(xrt__vctx *v) {
  switch (v->op->code) {
  case XRT_OP_IS_FINITE: case XRT_OP_REAL: case XRT_OP_IMAG:
    return xrt__verify_float_unary(v);
  case XRT_OP_COMPLEX: return xrt__verify_complex(v);
  case XRT_OP_REPLICA_ID: case XRT_OP_PARTITION_ID: {
    xrt_status s = xrt__vcounts(v, 0, 1);
    const xrt_shape *r = s ? NULL : xrt__result(v, 0);
    if (!s && (r->rank != 0 || r->dtype != XRT_U32))
      s = xrt__vfail(v, "result must be tensor<ui32>");
    return s;
  }
  case XRT_OP_COMPARE: return xrt__verify_compare(v);
  case XRT_OP_SELECT: return xrt__verify_select(v);
  case XRT_OP_CLAMP: return xrt__verify_clamp(v);
  case XRT_OP_CONVERT: return xrt__verify_convert(v);
  case XRT_OP_BITCAST_CONVERT: return xrt__verify_bitcast(v);
  case XRT_OP_IOTA: return xrt__verify_iota(v);
  case XRT_OP_BROADCAST_IN_DIM: return xrt__verify_broadcast_in_dim(v);
  case XRT_OP_BROADCAST: return xrt__verify_broadcast(v);
  case XRT_OP_RESHAPE: return xrt__verify_reshape(v);
  case XRT_OP_TRANSPOSE: return xrt__verify_transpose(v);
  case XRT_OP_SLICE: return xrt__verify_slice(v);
  case XRT_OP_CONCATENATE: return xrt__verify_concatenate(v);
  case XRT_OP_PAD: return xrt__verify_pad(v);
  case XRT_OP_REVERSE: return xrt__verify_reverse(v);
  case XRT_OP_REDUCE: return xrt__verify_reduce(v);
  case XRT_OP_DOT_GENERAL: return xrt__verify_dot_general(v);
  case XRT_OP_DOT: return xrt__verify_dot(v);
  case XRT_OP_GET_DIMENSION_SIZE: return xrt__verify_get_dimension_size(v);
  case XRT_OP_WHILE: return xrt__verify_while(v);
  case XRT_OP_FUNC_CALL: return xrt__verify_call(v);
  case XRT_OP_CONSTANT: return xrt__verify_constant(v);
  case XRT_OP_CUSTOM_CALL: return xrt__verify_custom_call(v);
  default: {
    xrt_status s = XRT_OK;
    if (xrt__elementwise_mask(v->op->code)) {
      /* quantized operands have further rules in the types family */
      s = xrt__verify_elementwise(v);
      return s ? s : xrt__verify_types(v);
    }
    s = xrt__verify_index(v);
    if (!s) s = xrt__verify_ctrl(v);
    if (!s) s = xrt__verify_linalg(v);
    if (!s) s = xrt__verify_types(v);
    return s;
  }
  }
}

static bool xrt__is_terminator(xrt_opcode c) {
  return c == XRT_OP_RETURN || c == XRT_OP_FUNC_RETURN;
}

static xrt_status xrt__verify_region(xrt__vctx *v, const xrt_ir_region *r,
                                     int depth) {
  if (depth > 256) return xrt__vfail(v, "regions are nested too deeply");
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    v->op = op;
    bool last = i == r->num_ops - 1;
    if (xrt__is_terminator(op->code) != last)
      return xrt__vfail(v, last ? "a region must end with a return"
                                : "a return must be the last op of its region");
    xrt_status s = xrt__verify_op(v);
    if (s) return s;
    for (int32_t k = 0; k < op->num_regions; k++) {
      if ((s = xrt__verify_region(v, &op->regions[k], depth + 1))) return s;
      v->op = op;
    }
  }
  if (r->num_ops == 0) return xrt__fail(XRT_INVALID_ARGUMENT,
                                        "%s:%d:%d: empty region in @%s",
                                        v->func->loc.file, (int)v->func->loc.line,
                                        (int)v->func->loc.col, v->func->name);
  return XRT_OK;
}

static xrt_status xrt__verify_func(xrt__vctx *v) {
  const xrt_ir_func *f = v->func;
  xrt_status s = xrt__verify_region(v, &f->body, 0);
  if (s) return s;
  const xrt_ir_op *ret = &f->body.ops[f->body.num_ops - 1];
  v->op = ret;
  if (ret->num_operands != f->num_results)
    return xrt__vfail(v, "@%s returns %d value(s) but is declared with %d",
                      f->name, (int)ret->num_operands, (int)f->num_results);
  for (int32_t i = 0; i < f->num_results; i++)
    if (!xrt__type_equal(&f->value_types[ret->operands[i]],
                         &f->result_types[i]))
      return xrt__vfail(v, "returned value %d of @%s has the wrong type",
                        (int)i, f->name);
  return XRT_OK;
}

static xrt_status xrt__verify_module(const xrt_ir_module *m) {
  xrt__vctx v = {m, NULL, NULL};
  for (int32_t i = 0; i < m->num_funcs; i++) {
    v.func = &m->funcs[i];
    xrt_status s = xrt__verify_func(&v);
    if (s) return s;
  }
  return XRT_OK;
}


/* ======================================================================
 * 7. Plugins
 *
 * A device is reached only through an xrt_plugin_api table, registered in
 * a context (a registry: built-in tables, shared libraries loaded by path,
 * XRT_PLUGINS or a directory scan; the code is in section 9a, after
 * the clients it counts).  Tables are checked when registered (size, ABI
 * version, name), and entries left NULL answer XRT_UNIMPLEMENTED at their
 * call (XRT__PLUGIN_NEED), so a plugin may implement only part of the ABI.
 *
 * The simulator is built in when xrt_sim.c is linked: with XRT_WITH_SIM defined
 * the reference is strong (what the Makefile does, so that a static archive
 * pulls the simulator in); otherwise on GCC/Clang it is weak, so copying
 * xrt.c alone still links, and copying xrt_sim.c beside it enables it.
 * ==================================================================== */

#if defined(XRT_WITH_SIM)
#define XRT__SIM_LINKED() 1
#elif defined(__GNUC__) && !defined(XRT_NO_SIM) && !defined(_WIN32)
#pragma weak xrt_sim_plugin_api
/* A weak function's address is NULL when nothing defines it. */
static bool xrt__sim_linked(void) {
  const xrt_plugin_api *(*volatile fn)(void) = xrt_sim_plugin_api;
  return fn != NULL;
}
#define XRT__SIM_LINKED() xrt__sim_linked()
#endif

/* The smallest table xrt loads: through `execute`, the last entry every
 * table since ABI 0.1 has (a shorter one cannot run a program). */
#define XRT__PLUGIN_MIN_SIZE                                                  \
  (offsetof(xrt_plugin_api, execute) + sizeof(((xrt_plugin_api *)0)->execute))
/* A table larger than this is garbage, not a newer minor version. */
#define XRT__PLUGIN_MAX_SIZE ((size_t)1 << 16)

/* A plugin registered in a context, and the context (section 9a,
 * after section 9).  A client points at its registration's private copy
 * of the plugin's table, zero-filled beyond the plugin's struct_size, so
 * an older plugin's missing entries read as NULL. */
typedef struct xrt__plugin_reg xrt__plugin_reg;
typedef struct xrt__context xrt__context;

/* The UNIMPLEMENTED answer for a table entry the plugin left NULL. */
static xrt_status xrt__plugin_lacks(const xrt_plugin_api *api,
                                    const char *fn) {
  return xrt__fail(XRT_UNIMPLEMENTED, "plugin '%s' does not implement %s",
                   api->name, fn);
}

/* Every call of a plugin function goes through this check (functions
 * returning void are skipped instead when NULL): returns XRT_UNIMPLEMENTED
 * from the enclosing function when the plugin of client c lacks fn. */
#define XRT__PLUGIN_NEED(c, fn)                                               \
  do {                                                                        \
    if (!(c)->api->fn) return xrt__plugin_lacks((c)->api, #fn);              \
  } while (0)

/* Used by client creation and release (defined in section 9a). */
static xrt_status xrt__context_acquire(xrt_context *context, const char *name,
                                       xrt__plugin_reg **out);
static void xrt__plugin_reg_unref(xrt__plugin_reg *r);
static const xrt_plugin_api *xrt__plugin_reg_api(const xrt__plugin_reg *r);
static xrt_status xrt__topology_resolve(const xrt_topology *in,
                                        xrt_topology *out);
static xrt_status xrt__plugin_check_version(const xrt__plugin_reg *r,
                                            const xrt_ir_module *m);

/* ======================================================================
 * 8. Handles
 *
 * Public object pointers are handles, not addresses: an index into a
 * process-wide slot table plus the slot's generation.  A released or
 * foreign handle fails the lookup instead of touching freed memory, which is
 * how xrt turns use-after-release into XRT_INVALID_ARGUMENT.  Slots live in
 * chunks that never move, so lookups take no lock.
 *
 * Buffers, executables and events are refcounted (queued work holds
 * references).  A release racing with a use on another thread either comes
 * first (the use fails cleanly) or second (the object lives until the use
 * drops its reference).  Buffers and executables are looked up and
 * referenced without a lock (xrt__hpin: their objects are recycled, never
 * freed while the client lives, and keep their handle slot across lives);
 * events take a striped lock that revoking the handle also takes.
 * ==================================================================== */

enum { XRT__H_FREE = 0, XRT__H_CLIENT, XRT__H_DEVICE, XRT__H_BUFFER,
       XRT__H_PROGRAM, XRT__H_EXECUTABLE, XRT__H_EVENT, XRT__H_SHARDED,
       XRT__H_PMAP, XRT__H_VARIABLE,
       XRT__H_CONTEXT, XRT__H_PLUGIN, XRT__H_REPORT,
       XRT__H_RDEVICE /* another process's device (section 13a) */ };

#define XRT__HCHUNK 4096u
#define XRT__HMAXCHUNKS 4096u
#define XRT__HIDX_BITS 24u /* 16M live handles */
#define XRT__HIDX_MASK ((1u << XRT__HIDX_BITS) - 1u)
#define XRT__HGEN_MASK ((uint64_t)(UINTPTR_MAX >> XRT__HIDX_BITS))

typedef struct xrt__hslot {
  _Atomic uint64_t tag; /* generation << 8 | kind */
  void *obj;
  uint32_t next_free;
} xrt__hslot;

static _Atomic(xrt__hslot *) xrt__hchunks[XRT__HMAXCHUNKS];
static atomic_flag xrt__hmu = ATOMIC_FLAG_INIT; /* the free list */
static uint32_t xrt__hcount;
static uint32_t xrt__hfree = UINT32_MAX;

/* Spin locks guard the free list, the stripes, the client's object lists
 * and the device queues: a few instructions each, and a lock/unlock pair
 * costs one atomic exchange where a mutex costs two (dispatch takes about
 * ten of them per call). */
#define XRT__HSTRIPES 64u
static atomic_flag xrt__hstripes[XRT__HSTRIPES];

static void xrt__spin_lock(atomic_flag *f) {
  while (atomic_flag_test_and_set_explicit(f, memory_order_acquire))
    sched_yield(); /* held for a few instructions only */
}

static void xrt__spin_unlock(atomic_flag *f) {
  atomic_flag_clear_explicit(f, memory_order_release);
}

static xrt__hslot *xrt__hslot_at(uint32_t idx) {
  xrt__hslot *c = atomic_load_explicit(&xrt__hchunks[idx / XRT__HCHUNK],
                                       memory_order_acquire);
  return c ? &c[idx % XRT__HCHUNK] : NULL;
}

/* Takes a free slot index (under xrt__hmu); UINT32_MAX when full. */
static uint32_t xrt__hslot_take(void) {
  if (xrt__hfree != UINT32_MAX) {
    uint32_t idx = xrt__hfree;
    xrt__hfree = xrt__hslot_at(idx)->next_free;
    return idx;
  }
  if (xrt__hcount >= XRT__HIDX_MASK) return UINT32_MAX;
  uint32_t chunk = xrt__hcount / XRT__HCHUNK;
  if (xrt__hcount % XRT__HCHUNK == 0) {
    /* Handle chunks are process-wide and live until exit. */
    xrt__hslot *c = (xrt__hslot *)calloc(XRT__HCHUNK, sizeof(xrt__hslot));
    if (!c) return UINT32_MAX;
    atomic_store_explicit(&xrt__hchunks[chunk], c, memory_order_release);
  }
  return xrt__hcount++;
}

/* Registers obj; returns its handle, or 0 when out of memory. */
static uintptr_t xrt__hnew(void *obj, int kind) {
  xrt__spin_lock(&xrt__hmu);
  uint32_t idx = xrt__hslot_take();
  uintptr_t h = 0;
  if (idx != UINT32_MAX) {
    xrt__hslot *s = xrt__hslot_at(idx);
    uint64_t gen = ((atomic_load(&s->tag) >> 8) + 1) & XRT__HGEN_MASK;
    if (gen == 0) gen = 1;
    s->obj = obj;
    atomic_store_explicit(&s->tag, gen << 8 | (uint64_t)kind,
                          memory_order_release);
    h = (uintptr_t)(gen << XRT__HIDX_BITS) | (uintptr_t)(idx + 1);
  }
  xrt__spin_unlock(&xrt__hmu);
  return h;
}

static void *xrt__hget(const void *handle, int kind) {
  uintptr_t h = (uintptr_t)handle;
  uint32_t idx = (uint32_t)(h & XRT__HIDX_MASK);
  if (idx == 0 || idx - 1 >= XRT__HCHUNK * XRT__HMAXCHUNKS) return NULL;
  xrt__hslot *s = xrt__hslot_at(idx - 1);
  if (!s) return NULL;
  uint64_t want = (uint64_t)(h >> XRT__HIDX_BITS) << 8 | (uint64_t)kind;
  if (atomic_load_explicit(&s->tag, memory_order_acquire) != want) return NULL;
  return s->obj;
}

/* Invalidates a handle (the generation stays, so old copies fail). */
static void xrt__hfree_handle(uintptr_t h) {
  if (!h) return;
  uint32_t idx = (uint32_t)(h & XRT__HIDX_MASK) - 1;
  xrt__spin_lock(&xrt__hmu);
  xrt__hslot *s = xrt__hslot_at(idx);
  uint64_t tag = atomic_load(&s->tag);
  atomic_store_explicit(&s->tag, tag & ~(uint64_t)0xff, memory_order_release);
  s->obj = NULL;
  s->next_free = xrt__hfree;
  xrt__hfree = idx;
  xrt__spin_unlock(&xrt__hmu);
}

/* Invalidates a handle but keeps its slot for the object's next life
 * (xrt__hrenew): recycled buffers reuse their slot, so neither dispatch nor
 * release takes the free-list lock.  The slot's obj stays the object. */
static void xrt__hkill(uintptr_t h) {
  if (!h) return;
  xrt__hslot *s = xrt__hslot_at((uint32_t)(h & XRT__HIDX_MASK) - 1);
  uint64_t tag = atomic_load_explicit(&s->tag, memory_order_relaxed);
  atomic_store_explicit(&s->tag, tag & ~(uint64_t)0xff, memory_order_release);
}

/* A new handle (the next generation) in the killed slot of h, whose obj
 * is still the object being reborn. */
static uintptr_t xrt__hrenew(uintptr_t h, int kind) {
  uint32_t idx = (uint32_t)(h & XRT__HIDX_MASK) - 1;
  xrt__hslot *s = xrt__hslot_at(idx);
  uint64_t tag = atomic_load_explicit(&s->tag, memory_order_relaxed);
  uint64_t gen = ((tag >> 8) + 1) & XRT__HGEN_MASK;
  if (gen == 0) gen = 1;
  atomic_store_explicit(&s->tag, gen << 8 | (uint64_t)kind,
                        memory_order_release);
  return (uintptr_t)(gen << XRT__HIDX_BITS) | (uintptr_t)(idx + 1);
}

static atomic_flag *xrt__hstripe(const void *handle) {
  return &xrt__hstripes[((uintptr_t)handle & XRT__HIDX_MASK) % XRT__HSTRIPES];
}


/* Looks up a refcounted object whose memory outlives its handles (buffers
 * and executables: dead objects are recycled, never freed while their
 * client lives) and takes a reference with one atomic operation and no
 * lock.  A stale handle may reach a dead object (refs 0: refused) or a
 * reborn one, which the second look at the handle catches: then *stale is
 * set and the caller drops the reference it got.  The owner stores a
 * nonzero count only into an object at 0, so no increment is lost. */
static void *xrt__hpin(const void *handle, int kind, size_t refs_at,
                       bool *stale) {
  *stale = false;
  char *obj = (char *)xrt__hget(handle, kind);
  if (!obj) return NULL;
  _Atomic int *refs = (_Atomic int *)(void *)(obj + refs_at);
  int r = atomic_load_explicit(refs, memory_order_relaxed);
  do {
    if (r == 0) return NULL;
  } while (!atomic_compare_exchange_weak_explicit(
      refs, &r, r + 1, memory_order_acquire, memory_order_relaxed));
  *stale = xrt__hget(handle, kind) != obj;
  return obj;
}

/* Invalidates a live handle and returns its object (whose reference the
 * caller now drops); NULL if it was not live, so of two racing releases
 * exactly one wins.  Recycled kinds keep the slot (xrt__hkill). */
static void *xrt__hrevoke(const void *handle, int kind) {
  atomic_flag *mu = xrt__hstripe(handle);
  xrt__spin_lock(mu);
  void *obj = xrt__hget(handle, kind);
  if (obj && (kind == XRT__H_BUFFER || kind == XRT__H_EXECUTABLE))
    xrt__hkill((uintptr_t)handle);
  else if (obj) xrt__hfree_handle((uintptr_t)handle);
  xrt__spin_unlock(mu);
  return obj;
}

/* Frees h if it is still obj's live handle (client release). */
static void xrt__hfree_if_live(uintptr_t h, int kind, const void *obj) {
  if (h && xrt__hget((const void *)h, kind) == obj) xrt__hfree_handle(h);
}

/* ======================================================================
 * 9. Clients and devices
 * ==================================================================== */

typedef struct xrt__client xrt__client;
typedef struct xrt__task xrt__task;

/* The client's counters (xrt_client_get_stats). */
enum { XRT__ST_ALLOCS, XRT__ST_FREES, XRT__ST_BYTES_IN_USE, XRT__ST_COPIES,
       XRT__ST_BYTES_COPIED, XRT__ST_H2D, XRT__ST_D2H, XRT__ST_EXECS,
       XRT__ST_COMPILES, XRT__ST_CACHE_HITS, XRT__ST_COUNT };

/* A device's in-order queue, served by its worker thread.  `busy` means a
 * task is running: on the worker, or inline on a caller that found the
 * queue empty (the synchronous fast path), which keeps the order.  The
 * fields are under the spin lock; the worker sleeps on work_cv only when
 * it has nothing to run, and whoever wakes it clears `sleeping`. */
typedef struct xrt__queue {
  atomic_flag lock;
  xrt__task *head, *tail;
  bool busy, stop;
  _Atomic bool sleeping;
  pthread_mutex_t mu; /* for work_cv */
  pthread_cond_t work_cv;
  bool inited, started;
  pthread_t thread;
} xrt__queue;

typedef struct xrt__device {
  xrt__client *client;
  int index;
  uintptr_t handle;
  xrt_plugin_device_desc desc;
  xrt__queue q;
} xrt__device;

typedef struct xrt__host_entry {
  char *target;
  xrt_host_fn fn;
  void *user;
} xrt__host_entry;

/* Live objects of a client, so that client release can free them. */
typedef struct xrt__link {
  struct xrt__link *prev, *next;
} xrt__link;

struct xrt__client {
  xrt_allocator allocator;
  const xrt_plugin_api *api; /* the registration's copy of the table */
  xrt__plugin_reg *reg;      /* counts this client while it lives */
  xrt_topology topology;     /* resolved at creation */
  void *pc; /* the plugin's client */
  int num_devices;
  xrt__device *devices;
  uintptr_t handle;
  pthread_mutex_t mu; /* guards the host registry */
  atomic_flag objs_lock; /* guards the object lists (a few stores) */
  xrt__link buffers, executables, events, erefs;
  /* Dead buffer objects kept for reuse, each with its handle slot: a
   * dispatch then costs no malloc, free or handle-table lock. */
  struct xrt__buffer *free_bufs;
  xrt__link free_exes; /* dead executables' shells, likewise */
  xrt__host_entry *hosts;
  int num_hosts, cap_hosts;
  /* Every event of the client completes under ev_mu and broadcasts ev_cv
   * (one pair per client: waits are rare and short on the simulator). */
  pthread_mutex_t ev_mu;
  pthread_cond_t ev_cv;
  /* Held while a multi-device launch enters its devices' queues, so that
   * launches enter every queue in the same order (else their collectives
   * could wait on each other). */
  pthread_mutex_t launch_mu;
  _Atomic uint64_t next_launch_id;
  /* xrt_client_get_stats: counted at the plugin call sites, in a block
   * per thread (st_blks, under objs_lock; see XRT__STAT) or, past
   * XRT__ST_MAXBLKS threads or out of memory, in st. */
  struct xrt__stats_blk *st_blks;
  int st_nblks;
  _Atomic uint64_t st[XRT__ST_COUNT];
  struct xrt__cache *cache; /* section 12b; NULL: no compilation cache */
  struct xrt__mp *mp; /* section 13a; NULL: this process alone */
};

/* Multi-process hooks (section 13a). */
static xrt_status xrt__mp_join(xrt__client *c, const xrt_client_options *o);
static xrt_status xrt__mp_devices(xrt__client *c);
static void xrt__mp_free(xrt__client *c);
static uint64_t xrt__mp_new_launch_id(xrt__client *c); /* section 13a */

/* Stats counters are per thread: a dispatch counts five things, and five
 * atomic read-modify-writes on shared counters cost about a fifth of it.
 * Each thread adds to its own block of the client with a plain load and
 * store (it is the block's only writer); xrt_client_get_stats sums the
 * blocks.  A thread finds its block through a thread-local cache of the
 * last client it counted for; a block is keyed by the address of that
 * cache, so a later thread at the same address (the first one has exited)
 * takes it over.  Blocks live until the client is released. */
#define XRT__ST_MAXBLKS 64

typedef struct xrt__stats_blk {
  struct xrt__stats_blk *next;
  uintptr_t thread; /* &xrt__tls_stats of its writer */
  _Atomic uint64_t v[XRT__ST_COUNT];
} xrt__stats_blk;

static XRT__THREAD_LOCAL struct {
  uintptr_t client; /* handle: never reused, so never a dead client's */
  xrt__stats_blk *blk;
} xrt__tls_stats;

/* This thread's block of c (made on first use), or NULL: count in c->st. */
static xrt__stats_blk *xrt__stats_bind(xrt__client *c) {
  uintptr_t me = (uintptr_t)&xrt__tls_stats;
  xrt__spin_lock(&c->objs_lock);
  xrt__stats_blk *b = c->st_blks;
  while (b && b->thread != me) b = b->next;
  bool room = c->st_nblks < XRT__ST_MAXBLKS;
  xrt__spin_unlock(&c->objs_lock);
  if (!b && room &&
      (b = (xrt__stats_blk *)xrt__calloc(&c->allocator, 1, sizeof *b))) {
    b->thread = me;
    xrt__spin_lock(&c->objs_lock);
    b->next = c->st_blks;
    c->st_blks = b;
    c->st_nblks++;
    xrt__spin_unlock(&c->objs_lock);
  }
  if (b && c->handle) {
    xrt__tls_stats.client = c->handle;
    xrt__tls_stats.blk = b;
  }
  return b;
}

/* Out of line: the first count of a thread for a client. */
static void xrt__stat_add_slow(xrt__client *c, int i, uint64_t n) {
  xrt__stats_blk *b = xrt__stats_bind(c);
  if (!b) atomic_fetch_add_explicit(&c->st[i], n, memory_order_relaxed);
  else
    atomic_store_explicit(&b->v[i],
                          atomic_load_explicit(&b->v[i], memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline void xrt__stat_add(xrt__client *c, int i, uint64_t n) {
  if (xrt__tls_stats.client != c->handle || !c->handle) {
    xrt__stat_add_slow(c, i, n);
    return;
  }
  xrt__stats_blk *b = xrt__tls_stats.blk;
  atomic_store_explicit(&b->v[i],
                        atomic_load_explicit(&b->v[i], memory_order_relaxed) + n,
                        memory_order_relaxed);
}

/* Counter i of c: its shared part plus every thread's block. */
static uint64_t xrt__stat_sum(xrt__client *c, int i) {
  uint64_t v = atomic_load(&c->st[i]);
  xrt__spin_lock(&c->objs_lock);
  for (xrt__stats_blk *b = c->st_blks; b; b = b->next)
    v += atomic_load_explicit(&b->v[i], memory_order_relaxed);
  xrt__spin_unlock(&c->objs_lock);
  return v;
}

/* Adds n to the client's counter XRT__ST_<field>. */
#define XRT__STAT(c, field, n) \
  xrt__stat_add((c), XRT__ST_##field, (uint64_t)(n))

static void xrt__link_init(xrt__link *l) { l->prev = l->next = l; }
static void xrt__link_add(xrt__link *head, xrt__link *l) {
  l->next = head->next;
  l->prev = head;
  head->next->prev = l;
  head->next = l;
}
static void xrt__link_remove(xrt__link *l) {
  l->prev->next = l->next;
  l->next->prev = l->prev;
  l->prev = l->next = l;
}

static xrt__client *xrt__client_get(const xrt_client *c) {
  return (xrt__client *)xrt__hget(c, XRT__H_CLIENT);
}
static xrt__device *xrt__device_get(const xrt_device *d) {
  return (xrt__device *)xrt__hget(d, XRT__H_DEVICE);
}

void xrt_client_options_init(xrt_client_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->plugin = "sim";
  o->topology.process_index = o->topology.process_count = -1;
  o->topology.host_index = -1;
  o->topology.local_rank = o->topology.local_world_size = -1;
  o->num_devices = 1;
  o->device_memory_bytes = (uint64_t)4 << 30;
  o->allocator = xrt_allocator_system();
  o->compile_cache_bytes = (size_t)256 << 20;
}

static xrt_status xrt_host_register_builtins(xrt__client *c);
static void xrt__client_free(xrt__client *c);
/* Section 12b: a client's compilation cache. */
static xrt_status xrt__cache_create(xrt__client *c,
                                    const xrt_client_options *o);
static void xrt__cache_free(xrt__client *c);
static xrt_status xrt__queues_start(xrt__client *c);

/* Checks what device_describe returned: a plugin's garbage is an error. */
static xrt_status xrt__device_desc_check(const xrt__client *c, int i,
                                         const xrt_plugin_device_desc *d) {
  if (!d->kind)
    return xrt__fail(XRT_INTERNAL, "plugin '%s': device_describe(%d) "
                     "returned OK without a kind", c->api->name, i);
  if (d->num_attributes < 0 || (d->num_attributes > 0 && !d->attributes))
    return xrt__fail(XRT_INTERNAL, "plugin '%s': device_describe(%d) "
                     "returned %d attributes at %p", c->api->name, i,
                     d->num_attributes, (const void *)d->attributes);
  for (int k = 0; k < d->num_attributes; k++)
    if (!d->attributes[k].name)
      return xrt__fail(XRT_INTERNAL, "plugin '%s': device %d's attribute %d "
                       "has no name", c->api->name, i, k);
  return XRT_OK;
}

static xrt_status xrt__client_devices(xrt__client *c) {
  /* No device_count: no devices, and no client. */
  if (!c->api->device_count)
    return xrt__fail(XRT_UNIMPLEMENTED, "plugin '%s' does not implement "
                     "device_count, so it has no devices", c->api->name);
  XRT__PLUGIN_NEED(c, device_describe);
  int n = c->api->device_count(c->pc);
  if (n <= 0 || n > 65536)
    return xrt__fail(XRT_INTERNAL, "plugin '%s' reports %d devices (1..65536 "
                     "expected)", c->api->name, n);
  c->devices = (xrt__device *)xrt__calloc(&c->allocator, (size_t)n,
                                          sizeof(xrt__device));
  if (!c->devices) return xrt__nomem("the client's devices");
  c->num_devices = n;
  for (int i = 0; i < n; i++) {
    xrt__device *d = &c->devices[i];
    xrt_plugin_error err = {{0}};
    d->client = c;
    d->index = i;
    d->desc.struct_size = sizeof d->desc;
    xrt_status s = c->api->device_describe(c->pc, i, &d->desc, &err);
    if (s) return xrt__fail_plugin(s, c->api->name, &err);
    if ((s = xrt__device_desc_check(c, i, &d->desc))) return s;
    d->handle = xrt__hnew(d, XRT__H_DEVICE);
    if (!d->handle) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  return XRT_OK;
}

static xrt_status xrt__client_open(xrt__client *c,
                                   const xrt_client_options *o) {
  const char *name = o->plugin ? o->plugin : "sim";
  xrt_status s = xrt__topology_resolve(&o->topology, &c->topology);
  if (s || (s = xrt__context_acquire(o->context, name, &c->reg))) return s;
  c->api = xrt__plugin_reg_api(c->reg);
  XRT__PLUGIN_NEED(c, client_create);
  /* What the plugin makes, it must be able to free: else every client,
   * buffer or executable would leak the plugin's memory. */
  XRT__PLUGIN_NEED(c, client_destroy);
  if (c->api->buffer_alloc || c->api->buffer_wrap_host)
    XRT__PLUGIN_NEED(c, buffer_free);
  if (c->api->compile) XRT__PLUGIN_NEED(c, executable_destroy);
  if ((s = xrt__mp_join(c, o))) return s;
  xrt_plugin_client_args args;
  memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.num_devices = o->num_devices;
  args.device_memory_bytes = o->device_memory_bytes;
  args.allocator = c->allocator;
  args.threads_per_device = o->threads_per_device;
  args.topology = c->topology;
  args.host = xrt__host_api_for(c, &c->allocator);
  if (!args.host) return xrt__nomem("the client's trace registry entry");
  xrt_plugin_error err = {{0}};
  if ((s = c->api->client_create(&args, &c->pc, &err)))
    return xrt__fail_plugin(s, c->api->name, &err);
  if (!c->pc)
    return xrt__fail(XRT_INTERNAL, "plugin '%s': client_create returned OK "
                     "without a client", c->api->name);
  if ((s = xrt__client_devices(c)) || (s = xrt__mp_devices(c))) return s;
  if ((s = xrt_host_register_builtins(c))) return s;
  if ((s = xrt__queues_start(c))) return s;
  c->handle = xrt__hnew(c, XRT__H_CLIENT);
  if (!c->handle) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  return XRT_OK;
}

/* The client's locks; the event condition variable waits on the monotonic
 * clock, so that await_for is immune to wall-clock changes. */
static void xrt__client_init_sync(xrt__client *c) {
  pthread_mutex_init(&c->mu, NULL);
  pthread_mutex_init(&c->ev_mu, NULL);
  pthread_mutex_init(&c->launch_mu, NULL);
  xrt__os_cond_init(&c->ev_cv);
  xrt__link_init(&c->buffers);
  xrt__link_init(&c->executables);
  xrt__link_init(&c->events);
  xrt__link_init(&c->erefs);
  xrt__link_init(&c->free_exes);
  atomic_init(&c->next_launch_id, 1);
}

xrt_status xrt_client_create(const xrt_client_options *options,
                             xrt_client **out_client) {
  XRT__CHECK_ARG(out_client, "out_client is NULL");
  *out_client = NULL;
  xrt_client_options o;
  xrt_client_options_init(&o);
  if (options) o = *options;
  if (!o.allocator.alloc || !o.allocator.free)
    return xrt__fail(XRT_INVALID_ARGUMENT, "allocator lacks alloc or free");
  if (o.num_devices < 1 || o.num_devices > 1024)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_devices must be in 1..1024, "
                     "got %d", o.num_devices);
  if (o.device_memory_bytes == 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "device_memory_bytes is 0");
  xrt__client *c = (xrt__client *)xrt__calloc(&o.allocator, 1, sizeof *c);
  if (!c) return xrt__nomem("the client");
  c->allocator = o.allocator;
  xrt__client_init_sync(c);
  xrt_status s = xrt__client_open(c, &o);
  if (!s) s = xrt__cache_create(c, &o);
  if (s) {
    xrt__client_free(c);
    return s;
  }
  xrt__trace_client_opened(c, c->api->name, c->num_devices); /* 2b */
  *out_client = (xrt_client *)c->handle;
  return XRT_OK;
}

const char *xrt_client_platform(const xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  return c ? c->api->name : NULL;
}

int xrt_client_device_count(const xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  return c ? c->num_devices : -1;
}

xrt_device *xrt_client_device(xrt_client *client, int index) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_client_device: invalid client");
    return NULL;
  }
  if (index < 0 || index >= c->num_devices) {
    xrt__fail(XRT_OUT_OF_RANGE, "device index %d is outside 0..%d", index,
              c->num_devices - 1);
    return NULL;
  }
  return (xrt_device *)c->devices[index].handle;
}

uint64_t xrt_client_new_launch_id(xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_client_new_launch_id: invalid "
              "client");
    return 0;
  }
  if (c->mp) return xrt__mp_new_launch_id(c); /* alike in every process */
  return atomic_fetch_add_explicit(&c->next_launch_id, 1,
                                   memory_order_relaxed);
}

int xrt_device_id(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  return d ? d->index : -1;
}

const char *xrt_device_kind(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  return d ? d->desc.kind : NULL;
}

int xrt_device_attribute_count(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  return d ? d->desc.num_attributes : -1;
}

xrt_status xrt_device_attribute_get(const xrt_device *device, int index,
                                    xrt_attribute *out) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(out, "out is NULL");
  if (index < 0 || index >= d->desc.num_attributes)
    return xrt__fail(XRT_OUT_OF_RANGE, "attribute index %d is outside 0..%d",
                     index, d->desc.num_attributes - 1);
  *out = d->desc.attributes[index];
  return XRT_OK;
}

xrt_status xrt_device_attribute_find(const xrt_device *device,
                                     const char *name, xrt_attribute *out) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(name && out, "name or out is NULL");
  for (int i = 0; i < d->desc.num_attributes; i++)
    if (d->desc.attributes[i].name &&
        strcmp(d->desc.attributes[i].name, name) == 0) {
      *out = d->desc.attributes[i];
      return XRT_OK;
    }
  return xrt__fail(XRT_NOT_FOUND, "device %d has no attribute '%s'", d->index,
                   name);
}

/* ---------------------------------------------------------------------
 * 9a. Contexts and plugins: registrations, loading, topology, support
 *
 * A context's registry is an array of registrations under its mutex,
 * which also guards every registration's live-client count (a client
 * takes its count under it at creation, so unload and exclusive access
 * see a consistent number).  Loading holds the mutex across dlopen, so two
 * threads loading one file get one registration.
 * ------------------------------------------------------------------- */

struct xrt__plugin_reg {
  uintptr_t handle;            /* the xrt_plugin handle */
  xrt__context *ctx;
  char *name;                  /* registration name */
  char *path;                  /* as given; "" for a linked table */
  char *real;                  /* the path dlopen got; NULL if linked */
  xrt__os_file_id id;          /* the file's identity, for duplicates */
  void *dl;                    /* dlopen handle; NULL if linked */
  const xrt_plugin_api *table; /* the plugin's own table */
  size_t table_size;           /* its struct_size */
  xrt_plugin_api api;          /* private copy, zero-filled past table_size */
  xrt_plugin_platform_desc desc;
  int live_clients;            /* under ctx->mu */
};

struct xrt__context {
  uintptr_t handle;
  xrt_allocator allocator;
  pthread_mutex_t mu;
  xrt__plugin_reg **regs;
  int num_regs, cap_regs;
  bool is_default;
  /* The default context's XRT_PLUGINS failure, reported when a client
   * asks for a plugin it lacks. */
  char env_error[512];
};

/* "X.Y.Z" with decimal numbers (up to 9 digits each), nothing else. */
static bool xrt__version_parse(const char *s, int v[3]) {
  if (!s) return false;
  for (int k = 0; k < 3; k++) {
    int n = 0, digits = 0;
    while (*s >= '0' && *s <= '9' && digits < 9) {
      n = n * 10 + (*s++ - '0');
      digits++;
    }
    if (!digits || *s != (k < 2 ? '.' : '\0')) return false;
    if (k < 2) s++;
    v[k] = n;
  }
  return true;
}

static int xrt__version_cmp(const int a[3], const int b[3]) {
  for (int k = 0; k < 3; k++)
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

const char *xrt_stablehlo_version(void) { return XRT__STABLEHLO_VERSION; }

static char *xrt__ctx_strdup(xrt__context *x, const char *s) {
  size_t n = strlen(s);
  char *d = (char *)xrt__alloc(&x->allocator, n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

static xrt__context *xrt__context_get(const xrt_context *h) {
  return (xrt__context *)xrt__hget(h, XRT__H_CONTEXT);
}

/* A plugin handle of context x (under x->mu), or NULL. */
static xrt__plugin_reg *xrt__reg_of(const xrt__context *x,
                                    const xrt_plugin *h) {
  xrt__plugin_reg *r = (xrt__plugin_reg *)xrt__hget(h, XRT__H_PLUGIN);
  return r && r->ctx == x ? r : NULL;
}

static xrt__plugin_reg *xrt__reg_by_name(const xrt__context *x,
                                         const char *name) {
  for (int i = 0; i < x->num_regs; i++)
    if (strcmp(x->regs[i]->name, name) == 0) return x->regs[i];
  return NULL;
}

static xrt__plugin_reg *xrt__reg_by_file(const xrt__context *x,
                                         const xrt__os_file_id *id) {
  for (int i = 0; i < x->num_regs; i++)
    if (x->regs[i]->real && x->regs[i]->id.dev == id->dev &&
        x->regs[i]->id.ino == id->ino)
      return x->regs[i];
  return NULL;
}

static const xrt_plugin_api *xrt__plugin_reg_api(const xrt__plugin_reg *r) {
  return &r->api;
}

/* ---- checks of a table (both versions and the rule in every message) */

/* How to name a plugin in a message before its table is trusted. */
static const char *xrt__plugin_label(const char *name, const char *path) {
  return name ? name : path && *path ? path : "(unnamed)";
}

static xrt_status xrt__plugin_check_size(const xrt_plugin_api *t,
                                         const char *label, const char *at) {
  if (t->struct_size < XRT__PLUGIN_MIN_SIZE)
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s'%s: its table's "
                     "struct_size is %zu bytes, smaller than %zu, the minimum "
                     "for ABI %d.%d (xrt loads ABI %d.%d..%d.%d tables, which "
                     "all reach 'execute')", label, at, t->struct_size,
                     (size_t)XRT__PLUGIN_MIN_SIZE, XRT_PLUGIN_ABI_MAJOR,
                     XRT_PLUGIN_ABI_MIN_MINOR, XRT_PLUGIN_ABI_MAJOR,
                     XRT_PLUGIN_ABI_MIN_MINOR, XRT_PLUGIN_ABI_MAJOR,
                     XRT_PLUGIN_ABI_MINOR);
  if (t->struct_size > XRT__PLUGIN_MAX_SIZE)
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s'%s: its table's "
                     "struct_size is %zu bytes, more than %zu: not an xrt "
                     "plugin table", label, at, t->struct_size,
                     (size_t)XRT__PLUGIN_MAX_SIZE);
  return XRT_OK;
}

static xrt_status xrt__plugin_check_table(const xrt_plugin_api *t,
                                          const char *name, const char *path) {
  char at[600] = "";
  if (path && *path) snprintf(at, sizeof at, " (%s)", path);
  const char *label = xrt__plugin_label(name, path);
  xrt_status s = xrt__plugin_check_size(t, label, at);
  if (s) return s;
  if (t->name) label = name ? name : t->name;
  if (t->abi_major != XRT_PLUGIN_ABI_MAJOR)
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s'%s was built for "
                     "plugin ABI %u.%u; xrt implements ABI %d.%d and loads "
                     "only major version %d (with minor >= %d)", label, at,
                     t->abi_major, t->abi_minor, XRT_PLUGIN_ABI_MAJOR,
                     XRT_PLUGIN_ABI_MINOR, XRT_PLUGIN_ABI_MAJOR,
                     XRT_PLUGIN_ABI_MIN_MINOR);
  uint32_t min_minor = XRT_PLUGIN_ABI_MIN_MINOR; /* 0 today: no -Wtype-limits */
  if (t->abi_minor < min_minor)
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s'%s was built for "
                     "plugin ABI %u.%u; xrt implements ABI %d.%d and loads "
                     "minor versions >= %d of major %d", label, at,
                     t->abi_major, t->abi_minor, XRT_PLUGIN_ABI_MAJOR,
                     XRT_PLUGIN_ABI_MINOR, XRT_PLUGIN_ABI_MIN_MINOR,
                     XRT_PLUGIN_ABI_MAJOR);
  if (!t->name)
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s'%s (ABI %u.%u) "
                     "has no name: its table's name is NULL", label, at,
                     t->abi_major, t->abi_minor);
  return XRT_OK;
}

/* Asks platform_describe (when the plugin has it) and checks the answer;
 * a plugin without it gets the documented defaults. */
static xrt_status xrt__plugin_describe(xrt__plugin_reg *r) {
  xrt_plugin_platform_desc *d = &r->desc;
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  if (r->api.platform_describe) {
    xrt_plugin_error err = {{0}};
    xrt_status s = r->api.platform_describe(d, &err);
    if (s) return xrt__fail_plugin(s, r->name, &err);
    d->struct_size = sizeof *d;
  }
  int v[3];
  if ((d->stablehlo_min && !xrt__version_parse(d->stablehlo_min, v)) ||
      (d->stablehlo_max && !xrt__version_parse(d->stablehlo_max, v)))
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s': platform_describe "
                     "gave StableHLO versions '%s'..'%s', not X.Y.Z", r->name,
                     d->stablehlo_min ? d->stablehlo_min : "(any)",
                     d->stablehlo_max ? d->stablehlo_max : "(any)");
  if (d->num_attributes < 0 || (d->num_attributes && !d->attributes))
    return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s': platform_describe "
                     "gave %d attributes at %p", r->name, d->num_attributes,
                     (const void *)d->attributes);
  for (int k = 0; k < d->num_attributes; k++)
    if (!d->attributes[k].name)
      return xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s': platform "
                       "attribute %d has no name", r->name, k);
  if (!d->stablehlo_min) d->stablehlo_min = "0.0.0";
  if (!d->stablehlo_max) d->stablehlo_max = XRT__STABLEHLO_VERSION;
  if (!d->dtypes) d->dtypes = ((uint64_t)1 << XRT_DTYPE_COUNT) - 2; /* no INVALID */
  return XRT_OK;
}

static void xrt__reg_free(xrt__context *x, xrt__plugin_reg *r) {
  if (!r) return;
  xrt__hfree_if_live(r->handle, XRT__H_PLUGIN, r);
  if (r->dl) xrt__os_dl_close(r->dl);
  xrt__free(&x->allocator, r->name);
  xrt__free(&x->allocator, r->path);
  xrt__free(&x->allocator, r->real);
  xrt__free(&x->allocator, r);
}

/* Registers a checked table (under x->mu).  On success the registration
 * owns dl; on failure the caller still does. */
static xrt_status xrt__reg_add(xrt__context *x, const char *name,
                               const xrt_plugin_api *t, const char *path,
                               const char *real, void *dl,
                               xrt__plugin_reg **out) {
  xrt_status s = xrt__plugin_check_table(t, name, path);
  if (s) return s;
  if (!name) name = t->name;
  if (xrt__reg_by_name(x, name))
    return xrt__fail(XRT_ALREADY_EXISTS, "a plugin named '%s' is already "
                     "registered in this context%s%s", name,
                     path && *path ? "; cannot load " : "", path ? path : "");
  if (x->num_regs == x->cap_regs) {
    int cap = x->cap_regs ? 2 * x->cap_regs : 8;
    xrt__plugin_reg **g = (xrt__plugin_reg **)xrt__calloc(
        &x->allocator, (size_t)cap, sizeof *g);
    if (!g) return xrt__nomem("the context's plugin registry");
    if (x->num_regs) memcpy(g, x->regs, (size_t)x->num_regs * sizeof *g);
    xrt__free(&x->allocator, x->regs);
    x->regs = g;
    x->cap_regs = cap;
  }
  xrt__plugin_reg *r = (xrt__plugin_reg *)xrt__calloc(&x->allocator, 1,
                                                      sizeof *r);
  if (!r) return xrt__nomem("a plugin registration");
  r->ctx = x;
  r->table = t;
  r->table_size = t->struct_size;
  memcpy(&r->api, t, t->struct_size < sizeof r->api ? t->struct_size
                                                     : sizeof r->api);
  r->name = xrt__ctx_strdup(x, name);
  r->path = xrt__ctx_strdup(x, path ? path : "");
  r->real = real ? xrt__ctx_strdup(x, real) : NULL;
  if (!r->name || !r->path || (real && !r->real)) {
    s = xrt__nomem("a plugin registration's name and path");
  } else if (!(s = xrt__plugin_describe(r))) {
    r->handle = xrt__hnew(r, XRT__H_PLUGIN);
    if (!r->handle) s = xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  if (s) {
    xrt__reg_free(x, r); /* dl is still the caller's */
    return s;
  }
  r->dl = dl;
  x->regs[x->num_regs++] = r;
  xrt__log(XRT_LOG_INFO, "plugin", "registered plugin '%s' (%s, ABI %u.%u)%s%s",
           r->name, r->api.name, r->api.abi_major, r->api.abi_minor,
           *r->path ? " from " : "", r->path);
  *out = r;
  return XRT_OK;
}

/* ---- loading shared libraries ---- */

/* The library's table: NOT_FOUND without the entry symbol, FAILED_
 * PRECONDITION when it returns NULL. */
static xrt_status xrt__dl_table(void *dl, const char *path,
                                const xrt_plugin_api **out) {
  char why[512];
  xrt__os_fn sym = xrt__os_dl_sym(dl, XRT_PLUGIN_ENTRY_SYMBOL, why, sizeof why);
  if (!sym)
    return xrt__fail(XRT_NOT_FOUND, "'%s' does not export %s, so it is not "
                     "an xrt plugin (%s)", path, XRT_PLUGIN_ENTRY_SYMBOL, why);
  *out = ((xrt_plugin_get_api_fn)sym)();
  if (!*out)
    return xrt__fail(XRT_FAILED_PRECONDITION, "'%s': %s() returned NULL",
                     path, XRT_PLUGIN_ENTRY_SYMBOL);
  return XRT_OK;
}

/* The file at path (following symbolic links, so that every path to one
 * file finds one registration) and the path to give dlopen: "./x.so" for
 * "x.so", which dlopen would otherwise look for in the system's library
 * directories.  NOT_FOUND when it does not exist. */
static xrt_status xrt__plugin_file(xrt__context *x, const char *path,
                                   xrt__os_file_id *id, char **out) {
  char why[512];
  bool is_dir = false;
  int err = xrt__os_file_identify(path, id, &is_dir, why, sizeof why);
  if (err)
    return xrt__fail(err == ENOENT || err == ENOTDIR ? XRT_NOT_FOUND
                                                     : XRT_PERMISSION_DENIED,
                     "cannot load plugin '%s': %s", path, why);
  if (is_dir)
    return xrt__fail(XRT_INVALID_ARGUMENT, "cannot load plugin '%s': it is a "
                     "directory", path);
  bool bare = xrt__os_path_is_bare(path);
  size_t n = strlen(path);
  *out = (char *)xrt__alloc(&x->allocator, n + 3);
  if (!*out) return xrt__nomem("a plugin's path");
  snprintf(*out, n + 3, "%s%s", bare ? XRT__OS_HERE : "", path);
  return XRT_OK;
}

/* Loads one library (under x->mu).  *skipped (when not NULL) asks to
 * skip, not fail on, a file that is not a plugin (directory scans). */
static xrt_status xrt__load_locked(xrt__context *x, const char *name,
                                   const char *path, xrt__plugin_reg **out,
                                   bool *skipped) {
  char *real = NULL;
  xrt__os_file_id id;
  xrt_status s = xrt__plugin_file(x, path, &id, &real);
  if (s && skipped) { /* a dangling link in a scanned directory */
    xrt__log(XRT_LOG_INFO, "plugin", "skipped %s", xrt_last_error());
    *skipped = true;
    return XRT_OK;
  }
  if (s) return s;
  xrt__plugin_reg *r = xrt__reg_by_file(x, &id);
  if (r) { /* the same file, by whatever path: the same registration */
    xrt__free(&x->allocator, real);
    *out = r;
    return XRT_OK;
  }
  char why[512];
  void *dl = xrt__os_dl_open(real, why, sizeof why);
  const xrt_plugin_api *t = NULL;
  if (!dl) {
    s = xrt__fail(XRT_INVALID_ARGUMENT, "cannot load plugin '%s': not a "
                  "loadable shared library: %s", path, why);
  } else {
    s = xrt__dl_table(dl, path, &t);
  }
  if (skipped && (s == XRT_INVALID_ARGUMENT || s == XRT_NOT_FOUND)) {
    xrt__log(XRT_LOG_INFO, "plugin", "skipped %s", xrt_last_error());
    *skipped = true;
  } else if (!s) {
    s = xrt__reg_add(x, name, t, path, real, dl, out);
    if (!s) {
      dl = NULL; /* the registration's now */
      (*out)->id = id;
    }
  }
  if (dl) xrt__os_dl_close(dl);
  xrt__free(&x->allocator, real);
  return skipped && *skipped ? XRT_OK : s;
}

/* ---- contexts ---- */

void xrt_context_options_init(xrt_context_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->allocator = xrt_allocator_system();
  o->builtin_plugins = true;
  o->env_plugins = true;
}

static void xrt__context_free(xrt__context *x) {
  for (int i = 0; i < x->num_regs; i++) xrt__reg_free(x, x->regs[i]);
  xrt__free(&x->allocator, x->regs);
  xrt__hfree_if_live(x->handle, XRT__H_CONTEXT, x);
  pthread_mutex_destroy(&x->mu);
  xrt_allocator a = x->allocator;
  xrt__free(&a, x);
}

static xrt_status xrt__context_builtins(xrt__context *x) {
#ifdef XRT__SIM_LINKED
  if (XRT__SIM_LINKED()) {
    xrt__plugin_reg *r;
    return xrt__reg_add(x, "sim", xrt_sim_plugin_api(), "", NULL, NULL, &r);
  }
#else
  XRT__UNUSED(x);
#endif
  return XRT_OK;
}

static xrt_status xrt__context_new(const xrt_context_options *o,
                                   xrt__context **out) {
  xrt__context *x = (xrt__context *)xrt__calloc(&o->allocator, 1, sizeof *x);
  if (!x) return xrt__nomem("the context");
  x->allocator = o->allocator;
  pthread_mutex_init(&x->mu, NULL);
  x->handle = xrt__hnew(x, XRT__H_CONTEXT);
  xrt_status s = x->handle ? XRT_OK
                           : xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  if (!s && o->builtin_plugins) s = xrt__context_builtins(x);
  if (s) {
    xrt__context_free(x);
    return s;
  }
  *out = x;
  return XRT_OK;
}

xrt_status xrt_context_create(const xrt_context_options *options,
                              xrt_context **out_context) {
  XRT__CHECK_ARG(out_context, "out_context is NULL");
  *out_context = NULL;
  xrt_context_options o;
  xrt_context_options_init(&o);
  if (options) o = *options;
  XRT__CHECK_ARG(o.allocator.alloc && o.allocator.free,
                 "allocator lacks alloc or free");
  xrt__context *x;
  xrt_status s = xrt__context_new(&o, &x);
  if (s) return s;
  if (o.env_plugins && (s = xrt_context_load_env((xrt_context *)x->handle,
                                                 NULL))) {
    xrt__context_free(x);
    return s;
  }
  *out_context = (xrt_context *)x->handle;
  return XRT_OK;
}

static int xrt__context_live_clients(const xrt__context *x) {
  int n = 0;
  for (int i = 0; i < x->num_regs; i++) n += x->regs[i]->live_clients;
  return n;
}

xrt_status xrt_context_release(xrt_context *context) {
  if (!context) return XRT_OK;
  xrt__context *x = xrt__context_get(context);
  XRT__CHECK_ARG(x, "invalid or already released context");
  if (x->is_default)
    return xrt__fail(XRT_INVALID_ARGUMENT, "the process's default context "
                     "cannot be released");
  pthread_mutex_lock(&x->mu);
  int live = xrt__context_live_clients(x);
  pthread_mutex_unlock(&x->mu);
  if (live)
    return xrt__fail(XRT_FAILED_PRECONDITION, "the context still has %d live "
                     "client(s): release them first", live);
  xrt__context_free(x);
  return XRT_OK;
}

/* The process's default context: the built-in plugins plus XRT_PLUGINS
 * (whose failure is logged and kept, not fatal: the built-ins work). */
static xrt__context *xrt__default_ctx;
static pthread_once_t xrt__default_once = PTHREAD_ONCE_INIT;

static void xrt__default_context_init(void) {
  xrt_context_options o;
  xrt_context_options_init(&o);
  xrt__context *x;
  if (xrt__context_new(&o, &x)) return;
  x->is_default = true;
  if (xrt_context_load_env((xrt_context *)x->handle, NULL)) {
    snprintf(x->env_error, sizeof x->env_error, "%.*s",
             (int)sizeof x->env_error - 1, xrt_last_error());
    xrt__log(XRT_LOG_WARN, "plugin", "%s", x->env_error);
  }
  xrt__default_ctx = x;
}

static xrt__context *xrt__context_resolve(xrt_context *context) {
  if (context) return xrt__context_get(context);
  pthread_once(&xrt__default_once, xrt__default_context_init);
  return xrt__default_ctx;
}

/* ---- registering and loading ---- */

xrt_status xrt_context_register_plugin(xrt_context *context, const char *name,
                                       const xrt_plugin_api *api,
                                       xrt_plugin **out_plugin) {
  if (out_plugin) *out_plugin = NULL;
  xrt__context *x = xrt__context_get(context);
  XRT__CHECK_ARG(x, "invalid context");
  XRT__CHECK_ARG(api, "api is NULL");
  pthread_mutex_lock(&x->mu);
  xrt__plugin_reg *r = NULL;
  const char *want = name ? name : api->struct_size >= XRT__PLUGIN_MIN_SIZE
                                       ? api->name : NULL;
  xrt__plugin_reg *old = want ? xrt__reg_by_name(x, want) : NULL;
  xrt_status s = XRT_OK;
  if (old && old->table == api && !old->dl) r = old; /* the same again */
  else s = xrt__reg_add(x, name, api, "", NULL, NULL, &r);
  pthread_mutex_unlock(&x->mu);
  if (!s && out_plugin) *out_plugin = (xrt_plugin *)r->handle;
  return s;
}

xrt_status xrt_context_load_plugin(xrt_context *context, const char *name,
                                   const char *path, xrt_plugin **out_plugin) {
  if (out_plugin) *out_plugin = NULL;
  xrt__context *x = xrt__context_get(context);
  XRT__CHECK_ARG(x, "invalid context");
  XRT__CHECK_ARG(path && *path, "path is NULL or empty");
  pthread_mutex_lock(&x->mu);
  xrt__plugin_reg *r = NULL;
  xrt_status s = xrt__load_locked(x, name, path, &r, NULL);
  pthread_mutex_unlock(&x->mu);
  if (!s && out_plugin) *out_plugin = (xrt_plugin *)r->handle;
  return s;
}

/* Loads one "name:path" entry (number k, for messages) of XRT_PLUGINS;
 * "name;path" on Windows (XRT__OS_PLUGIN_SEP). */
static xrt_status xrt__load_env_entry(xrt_context *context, const char *e,
                                      size_t n, int k, const char *what) {
  while (n && (*e == ' ' || *e == '\t')) e++, n--;
  while (n && (e[n - 1] == ' ' || e[n - 1] == '\t')) n--;
  if (!n) return XRT_OK; /* "a:x,,b:y" or a trailing comma */
  const char *colon = memchr(e, XRT__OS_PLUGIN_SEP, n);
  if (!colon || colon == e || colon == e + n - 1 || n > 4095)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s entry %d ('%.*s') is not "
                     "name%cpath", what, k, (int)(n < 200 ? n : 200), e,
                     XRT__OS_PLUGIN_SEP);
  char buf[4096];
  memcpy(buf, e, n);
  buf[n] = 0;
  buf[colon - e] = 0;
  xrt_status s = xrt_context_load_plugin(context, buf, buf + (colon - e) + 1,
                                         NULL);
  if (s) {
    char why[2048];
    snprintf(why, sizeof why, "%s", xrt_last_error());
    return xrt__fail(s, "%s entry %d ('%s%c%s'): %s", what, k, buf,
                     XRT__OS_PLUGIN_SEP, buf + (colon - e) + 1, why);
  }
  return XRT_OK;
}

xrt_status xrt_context_load_env(xrt_context *context, const char *spec) {
  XRT__CHECK_ARG(xrt__context_get(context), "invalid context");
  const char *what = spec ? "plugin list" : "XRT_PLUGINS";
  if (!spec) spec = getenv("XRT_PLUGINS");
  if (!spec) return XRT_OK;
  int k = 1;
  for (const char *e = spec;; k++) {
    const char *comma = strchr(e, ',');
    size_t n = comma ? (size_t)(comma - e) : strlen(e);
    xrt_status s = xrt__load_env_entry(context, e, n, k, what);
    if (s) return s;
    if (!comma) break;
    e = comma + 1;
  }
  return XRT_OK;
}

static bool xrt__is_library_name(const char *n) {
  static const char ext[] = XRT__OS_LIB_EXT;
  size_t len = strlen(n);
  return len > sizeof ext - 1 && strcmp(n + len - (sizeof ext - 1), ext) == 0;
}

static int xrt__strptr_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's library file names, from allocator a. */
typedef struct xrt__lib_list {
  const xrt_allocator *a;
  char **names;
  int n, cap;
} xrt__lib_list;

/* xrt__os_list_dir's callback: keeps library names; -1 when out of memory. */
static int xrt__lib_list_add(void *ctx, const char *name) {
  xrt__lib_list *l = (xrt__lib_list *)ctx;
  if (!xrt__is_library_name(name)) return 0;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    char **g = (char **)xrt__realloc(l->a, l->names, (size_t)l->n * sizeof *g,
                                     (size_t)cap * sizeof *g);
    if (!g) return -1;
    l->names = g;
    l->cap = cap;
  }
  if (!(l->names[l->n] = xrt__strdup_with(l->a, name))) return -1;
  l->n++;
  return 0;
}

/* The library file names of dir, sorted (so loads are reproducible), from
 * the context's allocator a. */
static xrt_status xrt__list_libraries(const xrt_allocator *a, const char *dir,
                                      char ***out, int *n) {
  xrt__lib_list l = {a, NULL, 0, 0};
  char why[512];
  int rc = xrt__os_list_dir(dir, xrt__lib_list_add, &l, why, sizeof why);
  xrt_status s = XRT_OK;
  if (rc < 0)
    s = xrt__nomem("a plugin directory's listing");
  else if (rc)
    s = xrt__fail(rc == ENOENT || rc == ENOTDIR ? XRT_NOT_FOUND
                                                : XRT_PERMISSION_DENIED,
                  "cannot scan plugin directory '%s': %s", dir, why);
  if (l.n) qsort(l.names, (size_t)l.n, sizeof *l.names, xrt__strptr_cmp);
  *out = l.names;
  *n = l.n;
  return s;
}

xrt_status xrt_context_scan_directory(xrt_context *context, const char *dir,
                                      int *out_loaded) {
  if (out_loaded) *out_loaded = 0;
  xrt__context *x = xrt__context_get(context);
  XRT__CHECK_ARG(x, "invalid context");
  XRT__CHECK_ARG(dir && *dir, "dir is NULL or empty");
  char **names = NULL;
  int n = 0, loaded = 0;
  xrt_status s = xrt__list_libraries(&x->allocator, dir, &names, &n);
  pthread_mutex_lock(&x->mu);
  for (int i = 0; i < n && !s; i++) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path)
      continue;
    bool skipped = false;
    xrt__plugin_reg *r;
    if (!(s = xrt__load_locked(x, NULL, path, &r, &skipped)) && !skipped)
      loaded++;
  }
  pthread_mutex_unlock(&x->mu);
  for (int i = 0; i < n; i++) xrt__free(&x->allocator, names[i]);
  xrt__free(&x->allocator, names);
  if (out_loaded) *out_loaded = loaded;
  return s;
}

xrt_status xrt_context_unload_plugin(xrt_context *context, xrt_plugin *plugin) {
  xrt__context *x = xrt__context_get(context);
  XRT__CHECK_ARG(x, "invalid context");
  pthread_mutex_lock(&x->mu);
  xrt__plugin_reg *r = xrt__reg_of(x, plugin);
  xrt_status s = XRT_OK;
  if (!r) {
    s = xrt__fail(XRT_INVALID_ARGUMENT, "xrt_context_unload_plugin: invalid "
                  "plugin, or one of another context");
  } else if (r->live_clients) {
    s = xrt__fail(XRT_FAILED_PRECONDITION, "plugin '%s' has %d live "
                  "client(s) (with their buffers and executables): release "
                  "them before unloading it", r->name, r->live_clients);
  } else {
    int i = 0;
    while (x->regs[i] != r) i++;
    memmove(&x->regs[i], &x->regs[i + 1],
            (size_t)(x->num_regs - i - 1) * sizeof *x->regs);
    x->num_regs--;
    xrt__reg_free(x, r);
  }
  pthread_mutex_unlock(&x->mu);
  return s;
}

int xrt_context_plugin_count(const xrt_context *context) {
  xrt__context *x = xrt__context_get(context);
  if (!x) return -1;
  pthread_mutex_lock(&x->mu);
  int n = x->num_regs;
  pthread_mutex_unlock(&x->mu);
  return n;
}

xrt_plugin *xrt_context_plugin(const xrt_context *context, int index) {
  xrt__context *x = xrt__context_get(context);
  if (!x) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_context_plugin: invalid context");
    return NULL;
  }
  pthread_mutex_lock(&x->mu);
  uintptr_t h = index >= 0 && index < x->num_regs ? x->regs[index]->handle : 0;
  int n = x->num_regs;
  pthread_mutex_unlock(&x->mu);
  if (!h)
    xrt__fail(XRT_OUT_OF_RANGE, "plugin index %d is outside 0..%d", index,
              n - 1);
  return (xrt_plugin *)h;
}

xrt_plugin *xrt_context_find_plugin(const xrt_context *context,
                                    const char *name) {
  xrt__context *x = xrt__context_get(context);
  if (!x || !name) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_context_find_plugin: %s",
              x ? "name is NULL" : "invalid context");
    return NULL;
  }
  pthread_mutex_lock(&x->mu);
  xrt__plugin_reg *r = xrt__reg_by_name(x, name);
  uintptr_t h = r ? r->handle : 0;
  pthread_mutex_unlock(&x->mu);
  if (!h) xrt__fail(XRT_NOT_FOUND, "no plugin named '%s' in the context", name);
  return (xrt_plugin *)h;
}

xrt_status xrt_plugin_get_info(const xrt_plugin *plugin, xrt_plugin_info *out) {
  xrt__plugin_reg *r = (xrt__plugin_reg *)xrt__hget(plugin, XRT__H_PLUGIN);
  XRT__CHECK_ARG(r, "invalid or unloaded plugin");
  XRT__CHECK_ARG(out, "out is NULL");
  memset(out, 0, sizeof *out);
  out->name = r->name;
  out->path = r->path;
  out->platform_name = r->api.name;
  out->platform_version = r->api.version ? r->api.version : "";
  out->abi_major = r->api.abi_major;
  out->abi_minor = r->api.abi_minor;
  out->stablehlo_min = r->desc.stablehlo_min;
  out->stablehlo_max = r->desc.stablehlo_max;
  out->capabilities = r->desc.capabilities;
  out->dtypes = r->desc.dtypes;
  out->num_attributes = r->desc.num_attributes;
  out->attributes = r->desc.attributes;
  return XRT_OK;
}

/* ---- clients of a registration ---- */

/* The names of x's plugins, for a NOT_FOUND message (under x->mu). */
static void xrt__plugin_names(const xrt__context *x, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < x->num_regs && used + 1 < cap; i++) {
    int w = snprintf(buf + used, cap - used, "%s'%s'", i ? ", " : "",
                     x->regs[i]->name);
    if (w < 0) break;
    used += (size_t)w;
  }
  if (!x->num_regs) snprintf(buf, cap, "none");
}

/* Counts a new client of the plugin named name (exclusive plugins take
 * one client at a time). */
static xrt_status xrt__context_acquire(xrt_context *context, const char *name,
                                       xrt__plugin_reg **out) {
  xrt__context *x = xrt__context_resolve(context);
  if (!x)
    return xrt__fail(context ? XRT_INVALID_ARGUMENT : XRT_RESOURCE_EXHAUSTED,
                     "%s", context ? "invalid context in the client options"
                                   : "cannot create the default context");
  pthread_mutex_lock(&x->mu);
  xrt__plugin_reg *r = xrt__reg_by_name(x, name);
  xrt_status s = XRT_OK;
  if (!r) {
    char names[512];
    xrt__plugin_names(x, names, sizeof names);
    s = xrt__fail(XRT_NOT_FOUND, "no device plugin named '%s' in the %s "
                  "(it has: %s)%s%s", name,
                  x->is_default ? "default context" : "context", names,
                  x->env_error[0] ? "; " : "", x->env_error);
  } else if ((r->desc.capabilities & XRT_CAP_EXCLUSIVE) && r->live_clients) {
    s = xrt__fail(XRT_FAILED_PRECONDITION, "device(s) of plugin '%s' are "
                  "held by another client (exclusive access)", r->name);
  } else {
    r->live_clients++;
    *out = r;
  }
  pthread_mutex_unlock(&x->mu);
  return s;
}

static void xrt__plugin_reg_unref(xrt__plugin_reg *r) {
  if (!r) return;
  pthread_mutex_lock(&r->ctx->mu);
  assert(r->live_clients > 0);
  r->live_clients--;
  pthread_mutex_unlock(&r->ctx->mu);
}

xrt_plugin *xrt_client_plugin(const xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_client_plugin: invalid client");
    return NULL;
  }
  return (xrt_plugin *)c->reg->handle;
}

xrt_status xrt_client_topology(const xrt_client *client, xrt_topology *out) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(out, "out is NULL");
  *out = c->topology;
  return XRT_OK;
}

/* ---- topology ---- */

/* One field: the option's value, or (at -1) the first environment
 * variable of vars that is set, or def.  *from names where it came from. */
static xrt_status xrt__topo_field(int opt, const char *field,
                                  const char *const *vars, int def, int *out,
                                  const char **from) {
  *from = "the default";
  *out = def;
  if (opt != -1) {
    *from = "the options";
    *out = opt;
    if (opt < 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "topology: %s is %d in the "
                       "options (-1 reads the environment; else >= 0)", field,
                       opt);
    return XRT_OK;
  }
  for (; *vars; vars++) {
    const char *v = getenv(*vars);
    if (!v || !*v) continue;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    while (*end == ' ' || *end == '\n') end++;
    if (end == v || *end || errno || n < 0 || n > INT_MAX)
      return xrt__fail(XRT_INVALID_ARGUMENT, "topology: environment variable "
                       "%s='%s' (for %s) is not a non-negative integer", *vars,
                       v, field);
    *out = (int)n;
    *from = *vars;
    return XRT_OK;
  }
  return XRT_OK;
}

static xrt_status xrt__topology_resolve(const xrt_topology *in,
                                        xrt_topology *out) {
  static const char *const rank[] = {"RANK", NULL};
  static const char *const world[] = {"WORLD_SIZE", NULL};
  static const char *const host[] = {"XRT_HOST_INDEX", "GROUP_RANK",
                                     "NODE_RANK", NULL};
  static const char *const lrank[] = {"LOCAL_RANK", NULL};
  static const char *const lworld[] = {"LOCAL_WORLD_SIZE", NULL};
  const char *f_pi, *f_pc, *f_h, *f_lr, *f_lw;
  xrt_status s;
  if ((s = xrt__topo_field(in->process_index, "process_index", rank, 0,
                           &out->process_index, &f_pi)) ||
      (s = xrt__topo_field(in->process_count, "process_count", world, 1,
                           &out->process_count, &f_pc)) ||
      (s = xrt__topo_field(in->host_index, "host_index", host, 0,
                           &out->host_index, &f_h)) ||
      (s = xrt__topo_field(in->local_rank, "local_rank", lrank, 0,
                           &out->local_rank, &f_lr)) ||
      (s = xrt__topo_field(in->local_world_size, "local_world_size", lworld, 1,
                           &out->local_world_size, &f_lw)))
    return s;
  XRT__UNUSED(f_h);
  if (out->process_count < 1 || out->local_world_size < 1)
    return xrt__fail(XRT_INVALID_ARGUMENT, "topology: %s %d (from %s) must be "
                     "at least 1", out->process_count < 1 ? "process_count"
                     : "local_world_size", out->process_count < 1
                     ? out->process_count : out->local_world_size,
                     out->process_count < 1 ? f_pc : f_lw);
  if (out->process_index >= out->process_count)
    return xrt__fail(XRT_INVALID_ARGUMENT, "topology: process_index %d (from "
                     "%s) is not below process_count %d (from %s)",
                     out->process_index, f_pi, out->process_count, f_pc);
  if (out->local_rank >= out->local_world_size)
    return xrt__fail(XRT_INVALID_ARGUMENT, "topology: local_rank %d (from %s) "
                     "is not below local_world_size %d (from %s)",
                     out->local_rank, f_lr, out->local_world_size, f_lw);
  if (out->local_world_size > out->process_count)
    return xrt__fail(XRT_INVALID_ARGUMENT, "topology: local_world_size %d "
                     "(from %s) exceeds process_count %d (from %s)",
                     out->local_world_size, f_lw, out->process_count, f_pc);
  return XRT_OK;
}

/* ---- StableHLO versions ---- */

/* Whether the module's StableHLO version is in the plugin's range; on no,
 * why (the program's version and the range). */
static bool xrt__version_accepted(const xrt__plugin_reg *r,
                                  const xrt_ir_module *m, char *why,
                                  size_t cap) {
  int v[3], lo[3], hi[3];
  const char *pv = m->stablehlo_version ? m->stablehlo_version
                                        : XRT__STABLEHLO_VERSION;
  bool ok = xrt__version_parse(pv, v) &&
            xrt__version_parse(r->desc.stablehlo_min, lo) &&
            xrt__version_parse(r->desc.stablehlo_max, hi) &&
            xrt__version_cmp(v, lo) >= 0 && xrt__version_cmp(v, hi) <= 0;
  if (!ok)
    snprintf(why, cap, "the program is StableHLO %s, outside the versions "
             "plugin '%s' accepts (%s..%s)", pv, r->name,
             r->desc.stablehlo_min, r->desc.stablehlo_max);
  return ok;
}

static xrt_status xrt__plugin_check_version(const xrt__plugin_reg *r,
                                            const xrt_ir_module *m) {
  char why[512];
  if (xrt__version_accepted(r, m, why, sizeof why)) return XRT_OK;
  return xrt__fail(XRT_UNIMPLEMENTED, "%s", why);
}

/* ---- asking before compiling ---- */

struct xrt_support_report {
  uintptr_t handle;
  xrt_support verdict;
  int num, cap;
  xrt_support_issue *issues;
  xrt__arena strings; /* op names, files, reasons */
};

typedef struct xrt__support_walk {
  xrt__client *c;
  const xrt_ir_module *m;
  struct xrt_support_report *rep;
  int32_t *queue; /* functions to walk, each once */
  int32_t queued;
  bool *seen;
} xrt__support_walk;

static xrt_status xrt__report_add(struct xrt_support_report *rep,
                                  const char *op, xrt_ir_loc loc,
                                  xrt_support verdict, const char *reason) {
  if (rep->num == rep->cap) {
    int cap = rep->cap ? 2 * rep->cap : 16;
    xrt_support_issue *g = (xrt_support_issue *)xrt__realloc(
        &rep->strings.allocator, rep->issues,
        (size_t)rep->num * sizeof *g, (size_t)cap * sizeof *g);
    if (!g) return xrt__nomem("a support report's issues");
    rep->issues = g;
    rep->cap = cap;
  }
  xrt_support_issue *i = &rep->issues[rep->num];
  const char *file = loc.file ? loc.file : "<input>";
  i->op = xrt__arena_strndup(&rep->strings, op, strlen(op));
  i->file = xrt__arena_strndup(&rep->strings, file, strlen(file));
  i->reason = xrt__arena_strndup(&rep->strings, reason, strlen(reason));
  if (!i->op || !i->file || !i->reason)
    return xrt__nomem("a support report's issue text");
  i->line = loc.line;
  i->col = loc.col;
  i->verdict = verdict;
  rep->num++;
  if (verdict > rep->verdict) rep->verdict = verdict;
  return XRT_OK;
}

/* One op: the plugin's answer (NULL op_support: MAYBE), as an issue
 * unless YES; callees are queued. */
static xrt_status xrt__support_op(xrt__support_walk *w, int32_t func,
                                  const xrt_ir_op *op) {
  const xrt_plugin_api *api = w->c->api;
  const char *name = op->name ? op->name : xrt_opcode_name(op->code);
  if (op->code == XRT_OP_FUNC_CALL && op->callee >= 0 &&
      op->callee < w->m->num_funcs && !w->seen[op->callee]) {
    w->seen[op->callee] = true;
    w->queue[w->queued++] = op->callee;
  }
  if (!api->op_support)
    return xrt__report_add(w->rep, name, op->loc, XRT_SUPPORT_MAYBE,
                           "the plugin does not implement op_support");
  xrt_plugin_error why = {{0}};
  int v = api->op_support(w->c->pc, w->m, func, op, &why);
  if (v == XRT_SUPPORT_YES) return XRT_OK;
  if (v != XRT_SUPPORT_MAYBE && v != XRT_SUPPORT_NO)
    return xrt__fail(XRT_INTERNAL, "plugin '%s': op_support returned %d for "
                     "%s (not an xrt_support value)", api->name, v, name);
  why.message[sizeof why.message - 1] = 0;
  return xrt__report_add(w->rep, name, op->loc, (xrt_support)v,
                         why.message[0] ? why.message
                         : v == XRT_SUPPORT_NO ? "not supported"
                                               : "the plugin cannot tell");
}

static xrt_status xrt__support_region(xrt__support_walk *w, int32_t func,
                                      const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    xrt_status s = xrt__support_op(w, func, op);
    for (int32_t k = 0; !s && k < op->num_regions; k++)
      s = xrt__support_region(w, func, &op->regions[k]);
    if (s) return s;
  }
  return XRT_OK;
}

static xrt_status xrt__find_entry(const xrt_ir_module *m, const char *entry,
                                  int32_t *out);

/* The version, then every op of the entry and what it calls. */
static xrt_status xrt__support_walk_all(xrt__support_walk *w,
                                        const xrt_compile_options *o) {
  int32_t entry;
  xrt_status s = xrt__find_entry(w->m, o ? o->entry : NULL, &entry);
  if (s) return s;
  char why[512];
  if (!xrt__version_accepted(w->c->reg, w->m, why, sizeof why) &&
      (s = xrt__report_add(w->rep, "module", w->m->funcs[entry].loc,
                           XRT_SUPPORT_NO, why)))
    return s;
  w->seen[entry] = true;
  w->queue[w->queued++] = entry;
  for (int32_t i = 0; i < w->queued && !s; i++)
    s = xrt__support_region(w, w->queue[i], &w->m->funcs[w->queue[i]].body);
  return s;
}

/* The report and its arena come from the client's allocator, which must
 * outlive the report. */
static void xrt__report_free(struct xrt_support_report *rep) {
  if (!rep) return;
  xrt_allocator a = rep->strings.allocator;
  xrt__arena_release(&rep->strings);
  xrt__free(&a, rep->issues);
  xrt__free(&a, rep);
}

xrt_status xrt_client_query_support(xrt_client *client,
                                    const xrt_program *program,
                                    const xrt_compile_options *options,
                                    xrt_support_report **out_report) {
  XRT__CHECK_ARG(out_report, "out_report is NULL");
  *out_report = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  const xrt_ir_module *m = xrt_program_module(program);
  XRT__CHECK_ARG(m, "invalid program");
  xrt__support_walk w = {c, m, NULL, NULL, 0, NULL};
  const xrt_allocator *a = &c->allocator;
  w.rep = (struct xrt_support_report *)xrt__calloc(a, 1, sizeof *w.rep);
  if (w.rep) xrt__arena_init(&w.rep->strings, *a);
  w.queue = (int32_t *)xrt__calloc(a, (size_t)m->num_funcs + 1,
                                   sizeof *w.queue);
  w.seen = (bool *)xrt__calloc(a, (size_t)m->num_funcs + 1, sizeof *w.seen);
  xrt_status s = XRT_OK;
  if (!w.rep || !w.queue || !w.seen)
    s = xrt__nomem("a support report");
  else
    s = xrt__support_walk_all(&w, options);
  if (!s && !(w.rep->handle = xrt__hnew(w.rep, XRT__H_REPORT)))
    s = xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  xrt__free(a, w.queue);
  xrt__free(a, w.seen);
  if (s) {
    xrt__report_free(w.rep);
    return s;
  }
  *out_report = (xrt_support_report *)w.rep->handle;
  return XRT_OK;
}

static struct xrt_support_report *xrt__report_get(
    const xrt_support_report *h) {
  return (struct xrt_support_report *)xrt__hget(h, XRT__H_REPORT);
}

xrt_support xrt_support_report_verdict(const xrt_support_report *report) {
  struct xrt_support_report *r = xrt__report_get(report);
  if (!r) {
    xrt__fail(XRT_INVALID_ARGUMENT, "invalid support report");
    return XRT_SUPPORT_NO;
  }
  return r->verdict;
}

int xrt_support_report_count(const xrt_support_report *report) {
  struct xrt_support_report *r = xrt__report_get(report);
  return r ? r->num : -1;
}

const xrt_support_issue *xrt_support_report_issue(
    const xrt_support_report *report, int index) {
  struct xrt_support_report *r = xrt__report_get(report);
  if (!r || index < 0 || index >= r->num) {
    xrt__fail(r ? XRT_OUT_OF_RANGE : XRT_INVALID_ARGUMENT,
              "xrt_support_report_issue: %s", r ? "index out of range"
                                                : "invalid report");
    return NULL;
  }
  return &r->issues[index];
}

void xrt_support_report_release(xrt_support_report *report) {
  struct xrt_support_report *r = xrt__report_get(report);
  if (!r) return;
  xrt__hfree_handle(r->handle);
  xrt__report_free(r);
}

/* ======================================================================
 * 9b. Device queues and events
 *
 * Every device has a worker thread and an in-order queue of tasks (host
 * writes and reads, copies, execution participants, late event callbacks);
 * the core calls the plugin's (synchronous) functions from these threads.
 * A synchronous call whose device queue is empty and whose inputs are
 * ready runs inline on the calling thread while it holds the device
 * (xrt__device_hold), which keeps both the order and dispatch cheap.
 *
 * Events are refcounted; each user reference is its own handle (an
 * xrt__eref), so that two references to one event release independently.
 * A task waiting on an input event blocks its device's worker: inputs are
 * always produced by work enqueued earlier, so waits cannot form a cycle.
 * ==================================================================== */

#define XRT__MSG_CAP 1152

typedef struct xrt__cb {
  struct xrt__cb *next;
  xrt_event_callback fn;
  void *user;
} xrt__cb;

typedef struct xrt__event {
  xrt__link link; /* first: the client's list */
  xrt__client *client;
  _Atomic int refs;
  _Atomic int done;   /* 1 once code and message are final */
  int home;           /* device whose worker runs late callbacks */
  xrt_status code;
  bool cb_running;    /* a thread is running the callbacks (under ev_mu) */
  xrt__cb *cbs, **cbs_tail;
  char message[XRT__MSG_CAP];
} xrt__event;

typedef struct xrt__eref {
  xrt__link link; /* first: the client's list */
  xrt__event *ev;
  uintptr_t handle;
} xrt__eref;

static xrt__event *xrt__event_new(xrt__client *c, int home) {
  xrt__event *ev = (xrt__event *)xrt__calloc(&c->allocator, 1, sizeof *ev);
  if (!ev) return NULL;
  ev->client = c;
  ev->home = home;
  atomic_init(&ev->refs, 1);
  atomic_init(&ev->done, 0);
  ev->cbs_tail = &ev->cbs;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->events, &ev->link);
  xrt__spin_unlock(&c->objs_lock);
  return ev;
}

static void xrt__event_ref(xrt__event *ev) { atomic_fetch_add(&ev->refs, 1); }

static void xrt__event_destroy(xrt__event *ev) {
  xrt__client *c = ev->client;
  while (ev->cbs) {
    xrt__cb *n = ev->cbs->next;
    xrt__free(&c->allocator, ev->cbs);
    ev->cbs = n;
  }
  xrt__free(&c->allocator, ev);
}

static void xrt__event_unref(xrt__event *ev) {
  if (!ev || atomic_fetch_sub(&ev->refs, 1) != 1) return;
  xrt__client *c = ev->client;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_remove(&ev->link);
  xrt__spin_unlock(&c->objs_lock);
  xrt__event_destroy(ev);
}

static bool xrt__event_done(const xrt__event *ev) {
  return atomic_load_explicit(&((xrt__event *)ev)->done, memory_order_acquire);
}

/* Runs the callbacks registered so far, then any registered meanwhile;
 * only one thread at a time does this for an event (cb_running), which
 * keeps registration order. */
static void xrt__event_run_callbacks(xrt__event *ev) {
  xrt__client *c = ev->client;
  for (;;) {
    pthread_mutex_lock(&c->ev_mu);
    xrt__cb *list = ev->cbs;
    ev->cbs = NULL;
    ev->cbs_tail = &ev->cbs;
    if (!list) ev->cb_running = false;
    pthread_mutex_unlock(&c->ev_mu);
    if (!list) return;
    while (list) {
      xrt__cb *next = list->next;
      list->fn(list->user, ev->code, ev->code ? ev->message : "");
      xrt__free(&c->allocator, list);
      list = next;
    }
  }
}

/* Completes ev (on a device worker) and runs its callbacks. */
static void xrt__event_complete(xrt__event *ev, xrt_status code,
                                const char *msg) {
  xrt__client *c = ev->client;
  pthread_mutex_lock(&c->ev_mu);
  ev->code = code;
  if (code) snprintf(ev->message, sizeof ev->message, "%s", msg);
  atomic_store_explicit(&ev->done, 1, memory_order_release);
  bool run = ev->cbs != NULL;
  if (run) ev->cb_running = true;
  pthread_cond_broadcast(&c->ev_cv);
  pthread_mutex_unlock(&c->ev_mu);
  if (run) xrt__event_run_callbacks(ev);
}

/* Waits for ev; its code (the message stays in ev). */
static xrt_status xrt__event_wait(xrt__event *ev) {
  if (!xrt__event_done(ev)) {
    xrt__client *c = ev->client;
    pthread_mutex_lock(&c->ev_mu);
    while (!atomic_load_explicit(&ev->done, memory_order_relaxed))
      pthread_cond_wait(&c->ev_cv, &c->ev_mu);
    pthread_mutex_unlock(&c->ev_mu);
  }
  return ev->code;
}

/* Publishes a new user reference to ev (taking one). */
static xrt_status xrt__event_publish(xrt__event *ev, xrt_event **out) {
  xrt__client *c = ev->client;
  xrt__eref *r = (xrt__eref *)xrt__calloc(&c->allocator, 1, sizeof *r);
  if (!r) return xrt__nomem("an event handle");
  r->ev = ev;
  r->handle = xrt__hnew(r, XRT__H_EVENT);
  if (!r->handle) {
    xrt__free(&c->allocator, r);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  xrt__event_ref(ev);
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->erefs, &r->link);
  xrt__spin_unlock(&c->objs_lock);
  *out = (xrt_event *)r->handle;
  return XRT_OK;
}

/* The event behind a user handle, with a reference the caller drops. */
static xrt__event *xrt__event_acquire(const xrt_event *handle) {
  atomic_flag *mu = xrt__hstripe(handle);
  xrt__spin_lock(mu);
  xrt__eref *r = (xrt__eref *)xrt__hget(handle, XRT__H_EVENT);
  xrt__event *ev = r ? r->ev : NULL;
  if (ev) xrt__event_ref(ev);
  xrt__spin_unlock(mu);
  return ev;
}

/* ---- tasks ---- */

enum { XRT__T_WRITE, XRT__T_READ, XRT__T_COPY, XRT__T_EXEC,
       XRT__T_CALLBACKS, XRT__T_FAULT };

typedef struct xrt__buffer xrt__buffer;
typedef struct xrt__executable xrt__executable;

/* The shared state of a multi-participant launch. */
typedef struct xrt__launch {
  _Atomic int pending;   /* participants not yet done */
  xrt__event *done;      /* completes when pending reaches 0 */
  xrt_status code;       /* first failure (under the client's ev_mu) */
  char message[XRT__MSG_CAP];
} xrt__launch;

struct xrt__task {
  xrt__task *next;
  int kind;
  xrt__event *done;      /* completed by the task; owned reference */
  xrt__buffer *src, *dst; /* owned references */
  const void *host_src;  /* WRITE */
  void *host_dst;        /* READ */
  int64_t steps;         /* FAULT */
  /* EXEC: one participant of a launch. */
  xrt__executable *exe;
  xrt__launch *launch;   /* NULL: a launch of its own (done is its event) */
  uint64_t launch_id;
  int32_t replica, partition;
  int num_args, num_outs;
  xrt__buffer **bufs;    /* args then outputs, owned references */
  void **mems;           /* the same, as device memories */
};

static void xrt__task_run(xrt__device *d, xrt__task *t);

/* Wakes the worker if it sleeps; called under q->lock, signals after. */
static bool xrt__queue_take_sleeper(xrt__queue *q) {
  if (!atomic_load_explicit(&q->sleeping, memory_order_relaxed)) return false;
  atomic_store_explicit(&q->sleeping, false, memory_order_relaxed);
  return true;
}

static void xrt__queue_wake(xrt__queue *q) {
  pthread_mutex_lock(&q->mu);
  pthread_cond_signal(&q->work_cv);
  pthread_mutex_unlock(&q->mu);
}

/* Sleeps until a waker clears `sleeping` (set by the caller under lock). */
static void xrt__queue_sleep(xrt__queue *q) {
  pthread_mutex_lock(&q->mu);
  while (atomic_load_explicit(&q->sleeping, memory_order_relaxed))
    pthread_cond_wait(&q->work_cv, &q->mu);
  pthread_mutex_unlock(&q->mu);
}

static void *xrt__worker_main(void *arg) {
  xrt__device *d = (xrt__device *)arg;
  xrt__queue *q = &d->q;
  for (;;) {
    xrt__spin_lock(&q->lock);
    if (q->head && !q->busy) {
      xrt__task *t = q->head;
      q->head = t->next;
      if (!q->head) q->tail = NULL;
      q->busy = true;
      xrt__spin_unlock(&q->lock);
      xrt__task_run(d, t);
      xrt__spin_lock(&q->lock);
      q->busy = false;
      xrt__spin_unlock(&q->lock);
      continue;
    }
    bool stop = q->stop && !q->head;
    if (!stop) atomic_store_explicit(&q->sleeping, true, memory_order_relaxed);
    xrt__spin_unlock(&q->lock);
    if (stop) break;
    xrt__queue_sleep(q);
  }
  return NULL;
}

static void xrt__enqueue(xrt__device *d, xrt__task *t) {
  xrt__queue *q = &d->q;
  t->next = NULL;
  xrt__spin_lock(&q->lock);
  if (q->tail) q->tail->next = t;
  else q->head = t;
  q->tail = t;
  bool wake = !q->busy && xrt__queue_take_sleeper(q);
  xrt__spin_unlock(&q->lock);
  if (wake) xrt__queue_wake(q);
}

/* Takes the device for inline work if its queue is empty and idle. */
static bool xrt__device_hold(xrt__device *d) {
  xrt__queue *q = &d->q;
  xrt__spin_lock(&q->lock);
  bool ok = !q->head && !q->busy;
  if (ok) q->busy = true;
  xrt__spin_unlock(&q->lock);
  return ok;
}

static void xrt__device_unhold(xrt__device *d) {
  xrt__queue *q = &d->q;
  xrt__spin_lock(&q->lock);
  q->busy = false;
  bool wake = q->head && xrt__queue_take_sleeper(q);
  xrt__spin_unlock(&q->lock);
  if (wake) xrt__queue_wake(q);
}

/* Whether the device has nothing queued or running. */
static bool xrt__device_idle(xrt__device *d) {
  xrt__queue *q = &d->q;
  xrt__spin_lock(&q->lock);
  bool idle = !q->head && !q->busy;
  xrt__spin_unlock(&q->lock);
  return idle;
}

static void xrt__queues_stop(xrt__client *c) {
  if (!c->devices) return;
  /* Work may enqueue work on other devices (late callbacks): drain until a
   * whole pass finds every queue idle.  Polling is fine at client release. */
  for (bool all_idle = false; !all_idle;) {
    all_idle = true;
    for (int i = 0; i < c->num_devices; i++)
      if (c->devices[i].q.started && !xrt__device_idle(&c->devices[i])) {
        all_idle = false;
        xrt__os_sleep_ns(100000);
        break;
      }
  }
  for (int i = 0; i < c->num_devices; i++) {
    xrt__queue *q = &c->devices[i].q;
    if (!q->inited) continue;
    if (q->started) {
      xrt__spin_lock(&q->lock);
      q->stop = true;
      bool wake = xrt__queue_take_sleeper(q);
      xrt__spin_unlock(&q->lock);
      if (wake) xrt__queue_wake(q);
      pthread_join(q->thread, NULL);
    }
    pthread_cond_destroy(&q->work_cv);
    pthread_mutex_destroy(&q->mu);
    q->inited = q->started = false;
  }
}

static xrt_status xrt__queues_start(xrt__client *c) {
  for (int i = 0; i < c->num_devices; i++) {
    xrt__device *d = &c->devices[i];
    pthread_mutex_init(&d->q.mu, NULL);
    pthread_cond_init(&d->q.work_cv, NULL);
    atomic_init(&d->q.sleeping, false);
    d->q.inited = true;
    int rc = pthread_create(&d->q.thread, NULL, xrt__worker_main, d);
    if (rc)
      return xrt__fail(XRT_RESOURCE_EXHAUSTED, "cannot start the worker "
                       "thread of device %d: %s", i, strerror(rc));
    d->q.started = true;
  }
  return XRT_OK;
}

static xrt__task *xrt__task_new(xrt__client *c, int kind, size_t extra) {
  xrt__task *t = (xrt__task *)xrt__calloc(&c->allocator, 1,
                                          sizeof *t + extra);
  if (t) t->kind = kind;
  return t;
}

/* A task as xrt__task_new with its completion event, homed on device home
 * (a failure leaves nothing behind). */
static xrt_status xrt__task_start(xrt__client *c, int kind, size_t extra,
                                  int home, xrt__task **out) {
  xrt__task *t = xrt__task_new(c, kind, extra);
  xrt__event *ev = t ? xrt__event_new(c, home) : NULL;
  if (!ev) {
    xrt__free(&c->allocator, t);
    return xrt__nomem("a device task and its event");
  }
  t->done = ev;
  *out = t;
  return XRT_OK;
}

/* ---- the public event calls ---- */

xrt_status xrt_event_await(xrt_event *event) {
  xrt__event *ev = xrt__event_acquire(event);
  XRT__CHECK_ARG(ev, "invalid or released event");
  xrt_status s = xrt__event_wait(ev);
  if (s) xrt__fail(s, "%s", ev->message);
  xrt__event_unref(ev);
  return s;
}

/* timeout_ns from now on xrt__os_now_ns's clock (saturating). */
static int64_t xrt__deadline(int64_t timeout_ns) {
  int64_t now = xrt__os_now_ns();
  return timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
}

xrt_status xrt_event_await_for(xrt_event *event, int64_t timeout_ns) {
  XRT__CHECK_ARG(timeout_ns >= 0, "timeout_ns is negative");
  xrt__event *ev = xrt__event_acquire(event);
  XRT__CHECK_ARG(ev, "invalid or released event");
  xrt__client *c = ev->client;
  if (!xrt__event_done(ev)) {
    int64_t until = xrt__deadline(timeout_ns);
    pthread_mutex_lock(&c->ev_mu);
    int rc = 0;
    while (!atomic_load_explicit(&ev->done, memory_order_relaxed) &&
           rc != ETIMEDOUT)
      rc = xrt__os_cond_wait_until(&c->ev_cv, &c->ev_mu, until);
    pthread_mutex_unlock(&c->ev_mu);
  }
  xrt_status s;
  if (!xrt__event_done(ev))
    s = xrt__fail(XRT_DEADLINE_EXCEEDED, "the event did not complete within "
                  "%" PRId64 " ns", timeout_ns);
  else if ((s = ev->code))
    xrt__fail(s, "%s", ev->message);
  xrt__event_unref(ev);
  return s;
}

bool xrt_event_is_ready(const xrt_event *event) {
  xrt__event *ev = xrt__event_acquire(event);
  if (!ev) return false;
  bool done = xrt__event_done(ev);
  xrt__event_unref(ev);
  return done;
}

xrt_status xrt_event_status(const xrt_event *event) {
  xrt__event *ev = xrt__event_acquire(event);
  XRT__CHECK_ARG(ev, "invalid or released event");
  xrt_status s;
  if (!xrt__event_done(ev))
    s = xrt__fail(XRT_UNAVAILABLE, "the event is still pending");
  else if ((s = ev->code))
    xrt__fail(s, "%s", ev->message);
  xrt__event_unref(ev);
  return s;
}

xrt_status xrt_event_on_ready(xrt_event *event, xrt_event_callback callback,
                              void *user) {
  XRT__CHECK_ARG(callback, "callback is NULL");
  xrt__event *ev = xrt__event_acquire(event);
  XRT__CHECK_ARG(ev, "invalid or released event");
  xrt__client *c = ev->client;
  xrt__cb *cb = (xrt__cb *)xrt__calloc(&c->allocator, 1, sizeof *cb);
  xrt__task *t = xrt__task_new(c, XRT__T_CALLBACKS, 0);
  if (!cb || !t) {
    xrt__free(&c->allocator, cb);
    xrt__free(&c->allocator, t);
    xrt__event_unref(ev);
    return xrt__nomem("an event callback");
  }
  cb->fn = callback;
  cb->user = user;
  pthread_mutex_lock(&c->ev_mu);
  *ev->cbs_tail = cb;
  ev->cbs_tail = &cb->next;
  /* A completed event with no thread running its callbacks: hand them to
   * its home device's worker (never run on the registering thread). */
  bool late = atomic_load_explicit(&ev->done, memory_order_relaxed) &&
              !ev->cb_running;
  if (late) ev->cb_running = true;
  pthread_mutex_unlock(&c->ev_mu);
  if (late) {
    t->done = ev; /* the task takes our reference */
    xrt__enqueue(&c->devices[ev->home], t);
  } else {
    xrt__free(&c->allocator, t);
    xrt__event_unref(ev);
  }
  return XRT_OK;
}

xrt_status xrt_event_release(xrt_event *event) {
  if (!event) return XRT_OK;
  xrt__eref *r = (xrt__eref *)xrt__hrevoke(event, XRT__H_EVENT);
  XRT__CHECK_ARG(r, "invalid or already released event");
  xrt__event *ev = r->ev;
  xrt__client *c = ev->client;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_remove(&r->link);
  xrt__spin_unlock(&c->objs_lock);
  xrt__free(&c->allocator, r);
  xrt__event_unref(ev);
  return XRT_OK;
}

/* ======================================================================
 * 10. Buffers
 *
 * A buffer is refcounted: its handle holds one reference and every queued
 * task that reads or writes it holds one, so releasing the handle while
 * work is pending is safe (the memory goes when the last task is done).
 * `ready` is NULL for a buffer that was complete when created (the inline
 * paths allocate no event), else the event of the work producing it;
 * failed, it poisons the buffer.
 * ==================================================================== */

struct xrt__buffer {
  xrt__link link; /* first: the client's list */
  xrt__client *client;
  _Atomic int refs;
  int device;
  xrt_shape shape;
  size_t bytes;
  void *mem;
  xrt__event *ready; /* owned reference, or NULL: ready and OK */
  uintptr_t handle;
  bool live;                /* holds device memory */
  struct xrt__buffer *next_free; /* on the client's free list */
  struct DLManagedTensor *dl; /* zero-copy import: deleted after buffer_free */
};

static void xrt__buffer_unref(xrt__buffer *b);

/* Without a lock: dispatch does this for every argument. */
static xrt__buffer *xrt__buffer_acquire(const xrt_buffer *handle) {
  bool stale;
  xrt__buffer *b = (xrt__buffer *)xrt__hpin(
      handle, XRT__H_BUFFER, offsetof(xrt__buffer, refs), &stale);
  if (stale) { /* released meanwhile */
    xrt__buffer_unref(b);
    return NULL;
  }
  return b;
}

/* Buffer objects are never freed while their client lives: every one
 * ever made stays on the client's `buffers` list (which client release
 * walks), and dead ones are reused, which makes the lock-free
 * xrt__buffer_acquire safe and spares dispatch a malloc and a free.  Each
 * thread keeps one dead object aside (keyed by the client's handle, never
 * reused), so that a release followed by a dispatch on one thread takes
 * no lock; the others wait on the client's free list. */
static XRT__THREAD_LOCAL struct {
  uintptr_t client;
  xrt__buffer *b;
} xrt__spare_buf;

/* A dead buffer object (a recycled one keeps its handle slot, the handle
 * dead) or a zeroed new one. */
static xrt__buffer *xrt__buffer_obj(xrt__client *c) {
  xrt__buffer *b = xrt__spare_buf.b;
  if (b && xrt__spare_buf.client == c->handle) {
    xrt__spare_buf.b = NULL;
    return b;
  }
  xrt__spin_lock(&c->objs_lock);
  b = c->free_bufs;
  if (b) c->free_bufs = b->next_free;
  xrt__spin_unlock(&c->objs_lock);
  if (b) return b;
  b = (xrt__buffer *)xrt__calloc(&c->allocator, 1, sizeof *b);
  if (!b) return NULL;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->buffers, &b->link);
  xrt__spin_unlock(&c->objs_lock);
  return b;
}

/* Sets a dead buffer object aside for reuse.  A spare of another client
 * is dropped from the slot (it stays on that client's list). */
static void xrt__buffer_recycle(xrt__client *c, xrt__buffer *b) {
  if (!xrt__spare_buf.b || xrt__spare_buf.client != c->handle) {
    xrt__spare_buf.client = c->handle;
    xrt__spare_buf.b = b;
    return;
  }
  xrt__spin_lock(&c->objs_lock);
  b->next_free = c->free_bufs;
  c->free_bufs = b;
  xrt__spin_unlock(&c->objs_lock);
}

static xrt_status xrt__buffer_publish(xrt__client *c, xrt__buffer *b,
                                      xrt__event *ready, xrt__buffer **out);

/* Allocates device memory and the buffer object around it; ready (may be
 * NULL) is the producer's event, of which the buffer takes a reference. */
static xrt_status xrt__buffer_new(xrt__client *c, int device,
                                  const xrt_shape *shape, size_t bytes,
                                  xrt__event *ready, xrt__buffer **out) {
  XRT__PLUGIN_NEED(c, buffer_alloc);
  xrt__buffer *b = xrt__buffer_obj(c);
  if (!b) return xrt__nomem("a buffer object");
  b->client = c;
  b->device = device;
  b->shape = *shape;
  b->bytes = bytes;
  b->ready = NULL;
  xrt_plugin_error err;
  err.message[0] = 0; /* not = {{0}}: zeroing 1 KiB per dispatch shows */
  b->mem = NULL;
  xrt_status s = c->api->buffer_alloc(c->pc, device, bytes, &b->mem, &err);
  if (s || !b->mem) { /* OK without memory: the plugin's bug, not a crash */
    xrt__buffer_recycle(c, b);
    if (!s) return xrt__fail(XRT_INTERNAL, "plugin '%s': buffer_alloc "
                             "returned OK without memory", c->api->name);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  return xrt__buffer_publish(c, b, ready, out);
}

/* Gives b, whose device memory b->mem is set, its handle and one
 * reference (on failure frees the memory and recycles b). */
static xrt_status xrt__buffer_publish(xrt__client *c, xrt__buffer *b,
                                      xrt__event *ready, xrt__buffer **out) {
  int device = b->device;
  size_t bytes = b->bytes;
  XRT__STAT(c, ALLOCS, 1);
  XRT__STAT(c, BYTES_IN_USE, bytes);
  b->live = true;
  /* Release: a stale acquirer that increments this count then sees the
   * old handle dead (see xrt__buffer_acquire). */
  atomic_store_explicit(&b->refs, 1, memory_order_release);
  b->handle = b->handle ? xrt__hrenew(b->handle, XRT__H_BUFFER)
                        : xrt__hnew(b, XRT__H_BUFFER);
  if (!b->handle) { /* only a new object lacks a slot: no one acquires it */
    atomic_store_explicit(&b->refs, 0, memory_order_relaxed);
    if (c->api->buffer_free) c->api->buffer_free(c->pc, device, b->mem);
    XRT__STAT(c, FREES, 1);
    XRT__STAT(c, BYTES_IN_USE, 0 - (uint64_t)bytes);
    b->live = false;
    xrt__buffer_recycle(c, b);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  if (ready) xrt__event_ref(ready);
  b->ready = ready;
  *out = b;
  return XRT_OK;
}

/* Frees the memory of a buffer whose last reference is gone (its handle
 * is dead) and recycles the object. */
static void xrt__dlpack_freed(xrt__buffer *b); /* section 15 */

static void xrt__buffer_destroy(xrt__buffer *b) {
  xrt__client *c = b->client;
  if (c->api->buffer_free) c->api->buffer_free(c->pc, b->device, b->mem);
  xrt__dlpack_freed(b);
  XRT__STAT(c, FREES, 1);
  XRT__STAT(c, BYTES_IN_USE, 0 - (uint64_t)b->bytes);
  xrt__event_unref(b->ready);
  b->mem = NULL;
  b->ready = NULL;
  b->live = false;
  xrt__buffer_recycle(c, b);
}

static void xrt__buffer_unref(xrt__buffer *b) {
  if (b && atomic_fetch_sub(&b->refs, 1) == 1) xrt__buffer_destroy(b);
}

/* Frees a buffer whose handle was never given out (failure paths). */
static void xrt__buffer_discard(xrt__buffer *b) {
  if (!b) return;
  xrt__hkill(b->handle);
  xrt__buffer_unref(b);
}

/* The status of a buffer's producer without waiting: XRT_OK when ready,
 * XRT_UNAVAILABLE while pending, else its error (message in the event). */
static xrt_status xrt__buffer_state(const xrt__buffer *b) {
  if (!b->ready) return XRT_OK;
  if (!xrt__event_done(b->ready)) return XRT_UNAVAILABLE;
  return b->ready->code;
}

/* Runs a task inline on a held device, as the worker would, and returns
 * the status of the event it completed; the caller keeps a reference to
 * t->done. */
static xrt_status xrt__run_held(xrt__device *d, xrt__task *t) {
  xrt__event *done = t->done;
  xrt__event_ref(done);
  xrt__task_run(d, t);
  xrt__device_unhold(d);
  xrt_status s = done->code;
  if (s) xrt__fail(s, "%s", done->message);
  xrt__event_unref(done);
  return s;
}

/* Enqueues t and waits for the event it completes (the synchronous calls
 * when the device is busy or an input is pending). */
static xrt_status xrt__run_queued(xrt__device *d, xrt__task *t) {
  xrt__event *done = t->done;
  xrt__event_ref(done);
  xrt__enqueue(d, t);
  xrt_status s = xrt__event_wait(done);
  if (s) xrt__fail(s, "%s", done->message);
  xrt__event_unref(done);
  return s;
}

/* Validates the arguments of from_host{,_async}. */
static xrt_status xrt__from_host_check(xrt__client *c, xrt__device *d,
                                       const xrt_shape *shape,
                                       const void *data, size_t *bytes) {
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == c, "device belongs to another client");
  XRT__CHECK_ARG(shape, "shape is NULL");
  xrt_status s = xrt__shape_check(shape, bytes);
  if (s) return s;
  XRT__CHECK_ARG(data || *bytes == 0, "data is NULL");
  return XRT_OK;
}

static xrt_status xrt__write_inline(xrt__client *c, xrt__device *d,
                                    const xrt_shape *shape, size_t bytes,
                                    const void *data, xrt__buffer **out) {
  if (bytes) XRT__PLUGIN_NEED(c, buffer_write);
  xrt__buffer *b;
  xrt_status s = xrt__buffer_new(c, d->index, shape, bytes, NULL, &b);
  if (s) return s;
  xrt_plugin_error err = {{0}};
  XRT__STAT(c, H2D, 1);
  int64_t t0 = xrt__trace_begin();
  if (bytes && (s = c->api->buffer_write(c->pc, d->index, b->mem, data, bytes,
                                         &err))) {
    xrt__buffer_discard(b);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  if (t0) xrt__trace_transfer(c, d->index, "h2d", shape, t0);
  *out = b;
  return XRT_OK;
}

/* A task of the given kind producing a new buffer of shape on device d:
 * the buffer has a pending ready event that the task completes, and the
 * task holds a reference to it beside its handle's. */
static xrt_status xrt__producer_task(xrt__client *c, int kind, xrt__device *d,
                                     const xrt_shape *shape, size_t bytes,
                                     xrt__task **out) {
  xrt__task *t;
  xrt_status s = xrt__task_start(c, kind, 0, d->index, &t);
  if (s) return s;
  s = xrt__buffer_new(c, d->index, shape, bytes, t->done, &t->dst);
  if (s) {
    xrt__event_unref(t->done);
    xrt__free(&c->allocator, t);
    return s;
  }
  atomic_fetch_add(&t->dst->refs, 1);
  *out = t;
  return XRT_OK;
}

/* A buffer with a pending ready event and the task that will fill it from
 * host memory. */
static xrt_status xrt__write_task(xrt__client *c, xrt__device *d,
                                  const xrt_shape *shape, size_t bytes,
                                  const void *data, xrt__task **out) {
  xrt_status s = xrt__producer_task(c, XRT__T_WRITE, d, shape, bytes, out);
  if (!s) (*out)->host_src = data;
  return s;
}

static void xrt__task_free(xrt__task *t, xrt__client *c);

xrt_status xrt_buffer_from_host(xrt_client *client, xrt_device *device,
                                const xrt_shape *shape, const void *data,
                                xrt_buffer **out_buffer) {
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  *out_buffer = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__device *d = xrt__device_get(device);
  size_t bytes = 0;
  xrt_status s = xrt__from_host_check(c, d, shape, data, &bytes);
  if (s) return s;
  xrt__buffer *b = NULL;
  if (xrt__device_hold(d)) {
    s = xrt__write_inline(c, d, shape, bytes, data, &b);
    xrt__device_unhold(d);
  } else {
    xrt__task *t;
    if ((s = xrt__write_task(c, d, shape, bytes, data, &t))) return s;
    b = t->dst;
    s = xrt__run_queued(d, t);
    if (s) {
      xrt__buffer_discard(b);
      b = NULL;
    }
  }
  if (b) *out_buffer = (xrt_buffer *)b->handle;
  return s;
}

xrt_status xrt_buffer_from_host_async(xrt_client *client, xrt_device *device,
                                      const xrt_shape *shape, const void *data,
                                      xrt_buffer **out_buffer,
                                      xrt_event **out_done) {
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  *out_buffer = NULL;
  if (out_done) *out_done = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__device *d = xrt__device_get(device);
  size_t bytes = 0;
  xrt_status s = xrt__from_host_check(c, d, shape, data, &bytes);
  if (s) return s;
  xrt__task *t;
  if ((s = xrt__write_task(c, d, shape, bytes, data, &t))) return s;
  if (out_done && (s = xrt__event_publish(t->done, out_done))) {
    xrt__buffer_discard(t->dst);
    xrt__task_free(t, c);
    return s;
  }
  *out_buffer = (xrt_buffer *)t->dst->handle;
  xrt__enqueue(d, t);
  return XRT_OK;
}

/* Validates a read of b into dst. */
static xrt_status xrt__read_check(const xrt__buffer *b, const void *dst,
                                  size_t dst_bytes) {
  XRT__CHECK_ARG(dst || b->bytes == 0, "dst is NULL");
  if (dst_bytes < b->bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "destination holds %zu bytes, the "
                     "buffer has %zu", dst_bytes, b->bytes);
  return XRT_OK;
}

/* A task reading b (whose reference it takes over) into dst. */
static xrt_status xrt__read_task(xrt__buffer *b, void *dst, xrt__task **out) {
  xrt__client *c = b->client;
  xrt__task *t;
  xrt_status s = xrt__task_start(c, XRT__T_READ, 0, b->device, &t);
  if (s) return s;
  t->src = b;
  t->host_dst = dst;
  *out = t;
  return XRT_OK;
}

xrt_status xrt_buffer_to_host(xrt_buffer *buffer, void *dst,
                              size_t dst_bytes) {
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  xrt__client *c = b->client;
  xrt__device *d = &c->devices[b->device];
  xrt_status s = xrt__read_check(b, dst, dst_bytes);
  xrt_status st = s ? s : xrt__buffer_state(b);
  if (s || (st != XRT_UNAVAILABLE && (st || xrt__device_hold(d)))) {
    if (!s && st) { /* poisoned: its producer's error */
      s = xrt__fail(st, "%s", b->ready->message);
    } else if (!s) {
      xrt_plugin_error err = {{0}};
      XRT__STAT(c, D2H, 1);
      int64_t t0 = xrt__trace_begin();
      if (b->bytes && !c->api->buffer_read)
        s = xrt__plugin_lacks(c->api, "buffer_read");
      else if (b->bytes &&
               (s = c->api->buffer_read(c->pc, b->device, b->mem, dst,
                                        b->bytes, &err)))
        xrt__fail_plugin(s, c->api->name, &err);
      if (t0 && !s) xrt__trace_transfer(c, b->device, "d2h", &b->shape, t0);
      xrt__device_unhold(d);
    }
    xrt__buffer_unref(b);
    return s;
  }
  xrt__task *t;
  if ((s = xrt__read_task(b, dst, &t))) {
    xrt__buffer_unref(b);
    return s;
  }
  return xrt__run_queued(d, t);
}

xrt_status xrt_buffer_to_host_async(xrt_buffer *buffer, void *dst,
                                    size_t dst_bytes, xrt_event **out_done) {
  XRT__CHECK_ARG(out_done, "out_done is NULL");
  *out_done = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  xrt__client *c = b->client;
  xrt__task *t = NULL;
  xrt_status s = xrt__read_check(b, dst, dst_bytes);
  if (!s) s = xrt__read_task(b, dst, &t);
  if (!s && (s = xrt__event_publish(t->done, out_done))) {
    xrt__task_free(t, c);
    return s;
  }
  if (s) {
    xrt__buffer_unref(b);
    return s;
  }
  xrt__enqueue(&c->devices[b->device], t);
  return XRT_OK;
}

/* A task copying src (whose reference it takes over) to a new buffer on
 * device d, whose ready event it completes. */
static xrt_status xrt__copy_task(xrt__buffer *src, xrt__device *d,
                                 xrt__task **out) {
  xrt_status s = xrt__producer_task(src->client, XRT__T_COPY, d, &src->shape,
                                    src->bytes, out);
  if (!s) (*out)->src = src;
  return s;
}

static xrt_status xrt__copy_check(xrt__buffer *b, xrt__device *d,
                                  xrt_buffer **out_buffer) {
  XRT__CHECK_ARG(b, "invalid or released buffer");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == b->client, "device belongs to another client");
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  return XRT_OK;
}

static xrt_status xrt__copy_inline(xrt__buffer *b, xrt__device *d,
                                   xrt__buffer **out) {
  xrt__client *c = b->client;
  if (b->bytes) XRT__PLUGIN_NEED(c, buffer_copy);
  xrt__buffer *nb;
  xrt_status s = xrt__buffer_new(c, d->index, &b->shape, b->bytes, NULL, &nb);
  if (s) return s;
  xrt_plugin_error err = {{0}};
  XRT__STAT(c, COPIES, 1);
  XRT__STAT(c, BYTES_COPIED, b->bytes);
  int64_t t0 = xrt__trace_begin();
  if (b->bytes && (s = c->api->buffer_copy(c->pc, b->device, b->mem, d->index,
                                           nb->mem, b->bytes, &err))) {
    xrt__buffer_discard(nb);
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  if (t0) /* on the source's track: its queue orders the copy */
    xrt__trace_transfer(c, b->device, "d2d", &b->shape, t0);
  *out = nb;
  return XRT_OK;
}

xrt_status xrt_buffer_copy_to_device(xrt_buffer *buffer, xrt_device *device,
                                     xrt_buffer **out_buffer) {
  if (out_buffer) *out_buffer = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  xrt__device *d = xrt__device_get(device);
  xrt_status s = xrt__copy_check(b, d, out_buffer);
  if (s) {
    xrt__buffer_unref(b);
    return s;
  }
  xrt__device *sd = &b->client->devices[b->device];
  xrt_status st = xrt__buffer_state(b);
  xrt__buffer *nb = NULL;
  if (st && st != XRT_UNAVAILABLE) {
    s = xrt__fail(st, "%s", b->ready->message);
  } else if (!st && xrt__device_hold(sd)) {
    s = xrt__copy_inline(b, d, &nb);
    xrt__device_unhold(sd);
  } else {
    xrt__task *t;
    atomic_fetch_add(&b->refs, 1); /* for the task */
    if ((s = xrt__copy_task(b, d, &t))) {
      xrt__buffer_unref(b);
    } else {
      nb = t->dst;
      s = xrt__run_queued(sd, t);
      if (s) {
        xrt__buffer_discard(nb);
        nb = NULL;
      }
    }
  }
  xrt__buffer_unref(b);
  if (nb) *out_buffer = (xrt_buffer *)nb->handle;
  return s;
}

xrt_status xrt_buffer_copy_to_device_async(xrt_buffer *buffer,
                                           xrt_device *device,
                                           xrt_buffer **out_buffer) {
  if (out_buffer) *out_buffer = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  xrt__device *d = xrt__device_get(device);
  xrt_status s = xrt__copy_check(b, d, out_buffer);
  xrt__task *t = NULL;
  if (!s) s = xrt__copy_task(b, d, &t);
  if (s) {
    xrt__buffer_unref(b);
    return s;
  }
  *out_buffer = (xrt_buffer *)t->dst->handle;
  xrt__enqueue(&b->client->devices[b->device], t);
  return XRT_OK;
}

xrt_status xrt_buffer_ready_event(xrt_buffer *buffer, xrt_event **out_event) {
  XRT__CHECK_ARG(out_event, "out_event is NULL");
  *out_event = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  xrt__client *c = b->client;
  xrt__event *ev = b->ready;
  xrt_status s = XRT_OK;
  if (ev) {
    xrt__event_ref(ev);
  } else if ((ev = xrt__event_new(c, b->device))) {
    atomic_store(&ev->done, 1); /* made ready: nobody else sees it yet */
  } else {
    s = xrt__nomem("a buffer's ready event");
  }
  if (ev) {
    s = xrt__event_publish(ev, out_event);
    xrt__event_unref(ev);
  }
  xrt__buffer_unref(b);
  return s;
}

xrt_status xrt_buffer_shape(const xrt_buffer *buffer, xrt_shape *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  *out = b->shape;
  xrt__buffer_unref(b);
  return XRT_OK;
}

size_t xrt_buffer_bytes(const xrt_buffer *buffer) {
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  size_t n = b ? b->bytes : 0;
  xrt__buffer_unref(b);
  return n;
}

xrt_device *xrt_buffer_device(const xrt_buffer *buffer) {
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  xrt_device *d = b ? (xrt_device *)b->client->devices[b->device].handle
                    : NULL;
  xrt__buffer_unref(b);
  return d;
}

xrt_status xrt_buffer_release(xrt_buffer *buffer) {
  if (!buffer) return XRT_OK;
  xrt__buffer *b = (xrt__buffer *)xrt__hrevoke(buffer, XRT__H_BUFFER);
  XRT__CHECK_ARG(b, "invalid or already released buffer");
  xrt__buffer_unref(b);
  return XRT_OK;
}

xrt_status xrt_device_inject_fault(xrt_device *device, int64_t after_steps) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(after_steps >= 0, "after_steps is negative");
  xrt__client *c = d->client;
  XRT__PLUGIN_NEED(c, inject_fault);
  /* Through the queue: the fault hits the next execution enqueued after
   * this call, and the plugin sees it on the device's own thread. */
  xrt__task *t;
  xrt_status s = xrt__task_start(c, XRT__T_FAULT, 0, d->index, &t);
  if (s) return s;
  t->steps = after_steps;
  return xrt__device_hold(d) ? xrt__run_held(d, t) : xrt__run_queued(d, t);
}

/* ======================================================================
 * 11. Host functions and the built-in check.* targets
 * ==================================================================== */

xrt_status xrt_host_call_fail(xrt_host_call *call, xrt_status code,
                              const char *fmt, ...) {
  if (call && call->error && call->error_cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call->error, call->error_cap, fmt, ap);
    va_end(ap);
  }
  return code == XRT_OK ? XRT_INTERNAL : code;
}

static xrt_status xrt__host_register(xrt__client *c, const char *target,
                                     xrt_host_fn fn, void *user) {
  for (int i = 0; i < c->num_hosts; i++)
    if (strcmp(c->hosts[i].target, target) == 0) {
      c->hosts[i].fn = fn;
      c->hosts[i].user = user;
      return XRT_OK;
    }
  if (c->num_hosts == c->cap_hosts) {
    int cap = c->cap_hosts ? 2 * c->cap_hosts : 8;
    xrt__host_entry *h = (xrt__host_entry *)xrt__calloc(
        &c->allocator, (size_t)cap, sizeof *h);
    if (!h) return xrt__nomem("the host function table");
    if (c->num_hosts) memcpy(h, c->hosts, sizeof *h * (size_t)c->num_hosts);
    xrt__free(&c->allocator, c->hosts);
    c->hosts = h;
    c->cap_hosts = cap;
  }
  size_t len = strlen(target);
  char *name = (char *)xrt__alloc(&c->allocator, len + 1);
  if (!name) return xrt__nomem("a host function's name");
  memcpy(name, target, len + 1);
  c->hosts[c->num_hosts++] = (xrt__host_entry){name, fn, user};
  return XRT_OK;
}

xrt_status xrt_client_register_host_function(xrt_client *client,
                                             const char *target,
                                             xrt_host_fn fn, void *user) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(target && *target, "target is NULL or empty");
  XRT__CHECK_ARG(fn, "fn is NULL");
  pthread_mutex_lock(&c->mu);
  xrt_status s = xrt__host_register(c, target, fn, user);
  pthread_mutex_unlock(&c->mu);
  return s;
}

static bool xrt__host_lookup(xrt__client *c, const char *target,
                             xrt_host_fn *fn, void **user) {
  bool found = false;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < c->num_hosts && !found; i++)
    if (strcmp(c->hosts[i].target, target) == 0) {
      *fn = c->hosts[i].fn;
      *user = c->hosts[i].user;
      found = true;
    }
  pthread_mutex_unlock(&c->mu);
  return found;
}

/* One element read from a host tensor, widened for comparison. */
typedef struct xrt__scalar {
  int klass;      /* XRT__K_* */
  int64_t i;      /* signed ints and pred */
  uint64_t u;     /* unsigned ints */
  double re, im;  /* floats (re) and complex */
  uint64_t bits;  /* float bit pattern (of re for complex) */
  uint64_t bits_im;
} xrt__scalar;

static void xrt__scalar_read(xrt_dtype t, const void *data, size_t i,
                             xrt__scalar *s) {
  const unsigned char *p = (const unsigned char *)data + i * xrt_dtype_size(t);
  memset(s, 0, sizeof *s);
  s->klass = xrt__dtype_class(t);
  switch (t) {
  case XRT_PRED: s->i = p[0] != 0; break;
  case XRT_S2: case XRT_S4: case XRT_S8: s->i = (int8_t)p[0]; break;
  case XRT_U2: case XRT_U4: case XRT_U8: s->u = p[0]; break;
  case XRT_S16: { int16_t v; memcpy(&v, p, 2); s->i = v; break; }
  case XRT_U16: { uint16_t v; memcpy(&v, p, 2); s->u = v; break; }
  case XRT_S32: { int32_t v; memcpy(&v, p, 4); s->i = v; break; }
  case XRT_U32: { uint32_t v; memcpy(&v, p, 4); s->u = v; break; }
  case XRT_S64: memcpy(&s->i, p, 8); break;
  case XRT_U64: memcpy(&s->u, p, 8); break;
  case XRT_F16: case XRT_BF16: {
    uint16_t v;
    memcpy(&v, p, 2);
    s->bits = v;
    s->re = t == XRT_F16 ? xrt_f16_to_f32(v) : xrt_bf16_to_f32(v);
    break;
  }
  case XRT_F32: case XRT_C64: {
    float v[2] = {0, 0};
    memcpy(v, p, t == XRT_C64 ? 8 : 4);
    s->re = v[0], s->im = v[1];
    s->bits = xrt__f32_to_bits(v[0]), s->bits_im = xrt__f32_to_bits(v[1]);
    break;
  }
  case XRT_F64: case XRT_C128: {
    double v[2] = {0, 0};
    memcpy(v, p, t == XRT_C128 ? 16 : 8);
    s->re = v[0], s->im = v[1];
    s->bits = xrt__f64_to_bits(v[0]), s->bits_im = xrt__f64_to_bits(v[1]);
    break;
  }
  default:
    if (xrt_dtype_is_float(t)) { /* the f8/f6/f4 families */
      s->bits = p[0];
      s->re = xrt_minifloat_to_f64(t, p[0]);
    } else {
      s->klass = XRT__K_NONE;
    }
    break;
  }
}

static int xrt__scalar_format(const xrt__scalar *s, char *buf, size_t cap) {
  switch (s->klass) {
  case XRT__K_PRED: return snprintf(buf, cap, "%s", s->i ? "true" : "false");
  case XRT__K_SINT: return snprintf(buf, cap, "%" PRId64, s->i);
  case XRT__K_UINT: return snprintf(buf, cap, "%" PRIu64, s->u);
  case XRT__K_FLOAT: return snprintf(buf, cap, "%.17g", s->re);
  case XRT__K_COMPLEX: return snprintf(buf, cap, "(%.17g, %.17g)", s->re, s->im);
  }
  return snprintf(buf, cap, "?");
}

/* "[1, 2]" for flat index i of a shape. */
static void xrt__index_format(const xrt_shape *sh, size_t i, char *buf,
                              size_t cap) {
  int64_t idx[XRT_MAX_RANK];
  for (int32_t d = sh->rank - 1; d >= 0; d--) {
    int64_t n = sh->dims[d] ? sh->dims[d] : 1;
    idx[d] = (int64_t)i % n;
    i /= (size_t)n;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int32_t d = 0; d < sh->rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, d ? ", %" PRId64 : "%" PRId64,
                          idx[d]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

typedef enum { XRT__CHECK_EQ, XRT__CHECK_ALMOST, XRT__CHECK_CLOSE,
               XRT__CHECK_LEGACY_EQ } xrt__check_kind;

typedef struct xrt__check_params {
  xrt__check_kind kind;
  double tolerance;
  uint64_t min_ulp, max_ulp;
} xrt__check_params;

/* IEEE equality, as the reference interpreter's expect_eq uses. */
static bool xrt__scalar_eq(const xrt__scalar *a, const xrt__scalar *b) {
  switch (a->klass) {
  case XRT__K_PRED: case XRT__K_SINT: return a->i == b->i;
  case XRT__K_UINT: return a->u == b->u;
  case XRT__K_FLOAT: return a->re == b->re;
  case XRT__K_COMPLEX: return a->re == b->re && a->im == b->im;
  }
  return false;
}

/* The reference interpreter's approximate equality of two floats. */
static bool xrt__float_almost(double f, double g, double tol) {
  if (f == g) return true;
  if (f != f || g != g) return (f != f) == (g != g);
  bool f_special = isinf(f) || f == 0, g_special = isinf(g) || g == 0;
  if ((f_special || g_special) && f != 0 && g != 0) return false;
  if (signbit(f) != signbit(g)) return false;
  return fabs(f - g) <= tol;
}

/* Magnitude bits, sign, nan and inf of a float pattern of type t. */
static void xrt__float_parts(xrt_dtype t, uint64_t bits, uint64_t *mag,
                             bool *neg, bool *nan, bool *inf) {
  xrt_minifloat_format mf;
  if (xrt_minifloat_format_of(t, &mf)) {
    int mw = mf.ebits + mf.mbits;
    double d = xrt_minifloat_to_f64(t, (uint8_t)bits);
    *neg = mf.kind != XRT_MINIFLOAT_E8M0 && ((bits >> mw) & 1u);
    *mag = mf.kind == XRT_MINIFLOAT_E8M0 ? bits : bits & ((1u << mw) - 1u);
    *nan = isnan(d);
    *inf = isinf(d);
    return;
  }
  int w = xrt_dtype_bits(t == XRT_C64 ? XRT_F32 : t == XRT_C128 ? XRT_F64 : t);
  int ebits = w == 64 ? 11 : w == 32 ? 8 : t == XRT_BF16 ? 8 : 5;
  int mbits = w - 1 - ebits;
  uint64_t sign = 1ull << (w - 1);
  *neg = (bits & sign) != 0;
  *mag = bits & (sign - 1);
  uint64_t emax = ((1ull << ebits) - 1) << mbits;
  *nan = (*mag & emax) == emax && (*mag & ((1ull << mbits) - 1));
  *inf = *mag == emax;
}

/* ULP distance as the reference interpreter's expect_close defines it. */
static uint64_t xrt__ulp_diff(xrt_dtype t, uint64_t f, uint64_t g) {
  if (f == g) return 0;
  uint64_t a, b;
  bool fn, gn, fnan, gnan, finf, ginf;
  xrt__float_parts(t, f, &a, &fn, &fnan, &finf);
  xrt__float_parts(t, g, &b, &gn, &gnan, &ginf);
  if (!fnan && !gnan && !finf && !ginf)
    return fn != gn ? a + b : (a > b ? a - b : b - a);
  if (fnan && gnan) return 0;
  return UINT64_MAX;
}

static bool xrt__check_element(xrt_dtype t, const xrt__check_params *p,
                               const xrt__scalar *a, const xrt__scalar *b,
                               uint64_t *ulp) {
  bool fp = a->klass == XRT__K_FLOAT || a->klass == XRT__K_COMPLEX;
  if (p->kind == XRT__CHECK_CLOSE && fp) {
    *ulp = xrt__ulp_diff(t, a->bits, b->bits);
    if (a->klass == XRT__K_COMPLEX) {
      uint64_t u2 = xrt__ulp_diff(t, a->bits_im, b->bits_im);
      if (u2 > *ulp) *ulp = u2;
    }
    return *ulp >= p->min_ulp && *ulp <= p->max_ulp;
  }
  if ((p->kind == XRT__CHECK_ALMOST || p->kind == XRT__CHECK_LEGACY_EQ) && fp)
    return xrt__float_almost(a->re, b->re, p->tolerance) &&
           (a->klass != XRT__K_COMPLEX ||
            xrt__float_almost(a->im, b->im, p->tolerance));
  return xrt__scalar_eq(a, b);
}

static xrt_status xrt__check_run(xrt_host_call *call,
                                 const xrt__check_params *p) {
  const xrt_ir_loc *l = &call->op->loc;
  if (call->num_inputs != 2)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s:%d:%d: %s takes "
                              "2 operands", l->file, (int)l->line, (int)l->col,
                              call->target);
  const xrt_host_tensor *x = &call->inputs[0], *y = &call->inputs[1];
  if (!xrt__shape_equal(&x->shape, &y->shape))
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s:%d:%d: %s: "
                              "operand types differ", l->file, (int)l->line,
                              (int)l->col, call->target);
  xrt_dtype t = x->shape.dtype;
  if (xrt__dtype_class(t) == XRT__K_NONE)
    return xrt_host_call_fail(call, XRT_UNIMPLEMENTED, "%s:%d:%d: %s does not "
                              "support %s yet", l->file, (int)l->line,
                              (int)l->col, call->target, xrt_dtype_name(t));
  size_t n = (size_t)xrt_shape_numel(&x->shape);
  for (size_t i = 0; i < n; i++) {
    xrt__scalar a, b;
    uint64_t ulp = 0;
    xrt__scalar_read(t, x->data, i, &a);
    xrt__scalar_read(t, y->data, i, &b);
    if (xrt__check_element(t, p, &a, &b, &ulp)) continue;
    char sa[96], sb[96], si[128], extra[64] = "";
    xrt__scalar_format(&a, sa, sizeof sa);
    xrt__scalar_format(&b, sb, sizeof sb);
    xrt__index_format(&x->shape, i, si, sizeof si);
    if (p->kind == XRT__CHECK_CLOSE)
      snprintf(extra, sizeof extra, " (%" PRIu64 " ULP apart, allowed %" PRIu64
               "..%" PRIu64 ")", ulp, p->min_ulp, p->max_ulp);
    else if (p->kind == XRT__CHECK_ALMOST)
      snprintf(extra, sizeof extra, " (tolerance %g)", p->tolerance);
    return xrt_host_call_fail(call, XRT_CHECK_FAILED, "%s:%d:%d: %s failed at "
                              "element %s: actual %s, expected %s%s", l->file,
                              (int)l->line, (int)l->col, call->target, si, sa,
                              sb, extra);
  }
  return XRT_OK;
}

static double xrt__attr_number(const xrt_ir_op *op, const char *name,
                               double dflt) {
  const xrt_ir_attr *a = op ? xrt_ir_op_attr(op, name) : NULL;
  if (!a) return dflt;
  if (a->kind == XRT_ATTR_FLOAT) return a->f;
  if (a->kind == XRT_ATTR_INT) return (double)a->i;
  return dflt;
}

static xrt_status xrt__check_eq_fn(void *user, xrt_host_call *call) {
  xrt__check_params p = {(xrt__check_kind)(intptr_t)user, 1e-3, 0, 3};
  if (p.kind == XRT__CHECK_ALMOST)
    p.tolerance = xrt__attr_number(call->op, "tolerance", 1e-3);
  if (p.kind == XRT__CHECK_LEGACY_EQ) p.tolerance = 1e-4;
  if (p.kind == XRT__CHECK_CLOSE) {
    p.min_ulp = (uint64_t)xrt__attr_number(call->op, "min_ulp_difference", 0);
    p.max_ulp = (uint64_t)xrt__attr_number(call->op, "max_ulp_difference", 3);
  }
  return xrt__check_run(call, &p);
}

static xrt_status xrt_host_register_builtins(xrt__client *c) {
  static const struct { const char *name; xrt__check_kind kind; } checks[] = {
      {"check.expect_eq", XRT__CHECK_EQ},
      {"check.expect_almost_eq", XRT__CHECK_ALMOST},
      {"check.expect_close", XRT__CHECK_CLOSE},
      {"check.eq", XRT__CHECK_LEGACY_EQ},
  };
  for (size_t i = 0; i < XRT__ARRAY_SIZE(checks); i++) {
    xrt_status s = xrt__host_register(c, checks[i].name, xrt__check_eq_fn,
                                      (void *)(intptr_t)checks[i].kind);
    if (s) return s;
  }
  return XRT_OK;
}

/* ======================================================================
 * 12. Programs and compilation
 * ==================================================================== */

/* A parsed, verified program.  Executables hold a reference to it, so the
 * IR they were compiled from outlives the user's handle. */
typedef struct xrt__program {
  xrt_allocator allocator;
  xrt__arena arena;
  xrt_ir_module *module;
  const xrt_ir_op **custom_calls; /* by op->callee */
  _Atomic int refs;
  uintptr_t handle;
  /* XXH3-128 of the text as the cache key reads it (section 12b), without
   * [0] and with [1] debug locations; set by xrt_program_parse. */
  uint64_t text_digest[2][2];
  bool has_digest;
} xrt__program;

/* Refcounted like buffers: queued executions hold references. */
struct xrt__executable {
  xrt__link link; /* first: the client's list */
  xrt__client *client;
  _Atomic int refs;
  xrt__program *program;
  int32_t entry;
  void *pexe;
  xrt_host_binding *bindings;
  int num_inputs, num_outputs;
  xrt_shape *inputs, *outputs;
  int32_t num_replicas, num_partitions;
  int32_t *assignment; /* device of each logical id */
  /* A cached executable's handles share what the plugin compiled (12b):
   * the fields above are then borrowed from it, and program may be NULL
   * (loaded from a cache store). */
  struct xrt__exe_shared *shared;
  const char *name, *module_name; /* the entry function, the module */
  /* Cheap and self-contained (see xrt__region_cheap): a launch whose
   * devices are idle may run its participants one after another on the
   * calling thread, which beats waking a worker per device. */
  bool inline_ok;
  uintptr_t handle;
};

void xrt_compile_options_init(xrt_compile_options *o) {
  if (o) memset(o, 0, sizeof *o);
}

void xrt_execute_options_init(xrt_execute_options *o) {
  if (o) memset(o, 0, sizeof *o);
}

/* The host function an op calls: custom_call's target, or the fixed names
 * under which a program's infeed/outfeed/send/recv reach the host. */
static const char *xrt__host_target(const xrt_ir_op *op) {
  switch (op->code) {
  case XRT_OP_CUSTOM_CALL: {
    const xrt_ir_attr *t = xrt_ir_op_attr(op, "call_target_name");
    return t ? t->s : NULL;
  }
  case XRT_OP_INFEED: return "xrt.infeed";
  case XRT_OP_OUTFEED: return "xrt.outfeed";
  case XRT_OP_SEND: return "xrt.send";
  case XRT_OP_RECV: return "xrt.recv";
  default: return NULL;
  }
}

/* Numbers the ops that call the host (op->callee) into a list. */
static int32_t xrt__number_custom_calls(const xrt_ir_region *r,
                                        const xrt_ir_op **list, int32_t n) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    xrt_ir_op *op = (xrt_ir_op *)&r->ops[i]; /* still ours: not yet shared */
    for (int32_t k = 0; k < op->num_regions; k++)
      n = xrt__number_custom_calls(&op->regions[k], list, n);
    if (!xrt__host_target(op)) continue;
    if (list) list[n] = op;
    op->callee = n++;
  }
  return n;
}

static xrt_status xrt__program_index(xrt__program *p) {
  xrt_ir_module *m = p->module;
  int32_t n = 0;
  for (int32_t i = 0; i < m->num_funcs; i++)
    n = xrt__number_custom_calls(&m->funcs[i].body, NULL, n);
  p->custom_calls = (const xrt_ir_op **)xrt__arena_alloc(
      &p->arena, sizeof(xrt_ir_op *) * (size_t)(n + 1));
  if (!p->custom_calls) return xrt__nomem("the program's custom_call index");
  n = 0;
  for (int32_t i = 0; i < m->num_funcs; i++)
    n = xrt__number_custom_calls(&m->funcs[i].body, p->custom_calls, n);
  m->num_custom_calls = n;
  return XRT_OK;
}

/* Parses and verifies text into the program's arena. */
static xrt_status xrt__program_build(xrt__program *p, const char *text,
                                     size_t len, const xrt_compile_options *o) {
  const char *file = o && o->filename ? o->filename : "<input>";
  int line_offset = o ? o->line_offset : 0;
  char *fname = xrt__arena_strndup(&p->arena, file, strlen(file));
  if (!fname) return xrt__nomem("the program's file name");
  xrt_status s = xrt__parse_module(&p->arena, text, len, fname, line_offset,
                                   &p->module);
  if (s) return s;
  if (p->module->num_funcs == 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s:%d:1: the program has no "
                     "function", file, 1 + line_offset);
  if ((s = xrt__normalize_module(&p->arena, p->module)) ||
      (s = xrt__verify_module(p->module)))
    return s;
  return xrt__program_index(p);
}

/* Section 12b: the compilation cache's entry points. */
static bool xrt__cache_wanted(const xrt__client *c,
                              const xrt_compile_options *o);
static xrt_status xrt__cache_compile(xrt__client *c, const char *text,
                                     size_t len, xrt__program *prog,
                                     const xrt_compile_options *o,
                                     xrt_executable **out);
static void xrt__cache_digest_program(xrt__program *p, const char *text,
                                      size_t len);

static xrt__program *xrt__program_get(const xrt_program *p) {
  return (xrt__program *)xrt__hget(p, XRT__H_PROGRAM);
}

static void xrt__program_unref(xrt__program *p) {
  if (atomic_fetch_sub(&p->refs, 1) != 1) return;
  xrt_allocator a = p->allocator;
  xrt__arena_release(&p->arena);
  xrt__free(&a, p);
}

static xrt_status xrt__program_create(xrt_allocator a, const char *text,
                                      size_t len,
                                      const xrt_compile_options *options,
                                      xrt__program **out) {
  xrt__program *p = (xrt__program *)xrt__calloc(&a, 1, sizeof *p);
  if (!p) return xrt__nomem("the program");
  p->allocator = a;
  atomic_init(&p->refs, 1);
  xrt__arena_init(&p->arena, a);
  xrt_status s = xrt__program_build(p, text, len, options);
  if (s) {
    xrt__program_unref(p);
    return s;
  }
  *out = p;
  return XRT_OK;
}

xrt_status xrt_program_parse(const char *text, size_t len,
                             const xrt_compile_options *options,
                             xrt_program **out_program) {
  XRT__CHECK_ARG(out_program, "out_program is NULL");
  *out_program = NULL;
  XRT__CHECK_ARG(text || len == 0, "text is NULL");
  xrt__program *p;
  xrt_status s = xrt__program_create(xrt_allocator_system(), text ? text : "",
                                     len, options, &p);
  if (s) return s;
  xrt__cache_digest_program(p, text ? text : "", len); /* section 12b */
  if (!(p->handle = xrt__hnew(p, XRT__H_PROGRAM))) {
    xrt__program_unref(p);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  *out_program = (xrt_program *)p->handle;
  return XRT_OK;
}

void xrt_program_release(xrt_program *program) {
  xrt__program *p = xrt__program_get(program);
  if (!p) return;
  xrt__hfree_handle(p->handle);
  xrt__program_unref(p);
}

int xrt_program_function_count(const xrt_program *program) {
  xrt__program *p = xrt__program_get(program);
  return p ? p->module->num_funcs : -1;
}

const char *xrt_program_function_name(const xrt_program *program, int index) {
  xrt__program *p = xrt__program_get(program);
  if (!p || index < 0 || index >= p->module->num_funcs) return NULL;
  return p->module->funcs[index].name;
}

const xrt_ir_module *xrt_program_module(const xrt_program *program) {
  xrt__program *p = xrt__program_get(program);
  return p ? p->module : NULL;
}

/* The entry function: the one named, else main, else the only one. */
static xrt_status xrt__find_entry(const xrt_ir_module *m, const char *entry,
                                  int32_t *out) {
  const char *want = entry ? entry : "main";
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, want) == 0) return *out = i, XRT_OK;
  if (!entry && m->num_funcs == 1) return *out = 0, XRT_OK;
  return xrt__fail(XRT_NOT_FOUND, "the program has no function @%s (it has "
                   "%d function(s), e.g. @%s)", want, (int)m->num_funcs,
                   m->num_funcs ? m->funcs[0].name : "");
}

/* Looks up the client's host function for every custom_call op. */
static xrt_status xrt__bind_custom_calls(xrt__executable *e) {
  xrt__program *p = e->program;
  int32_t n = p->module->num_custom_calls;
  e->bindings = (xrt_host_binding *)xrt__calloc(
      &e->client->allocator, (size_t)n + 1, sizeof(xrt_host_binding));
  if (!e->bindings) return xrt__nomem("the executable's host function bindings");
  for (int32_t k = 0; k < n; k++) {
    const xrt_ir_op *op = p->custom_calls[k];
    const char *target = xrt__host_target(op);
    if (!xrt__host_lookup(e->client, target, &e->bindings[k].fn,
                          &e->bindings[k].user))
      return xrt__fail(XRT_NOT_FOUND, "%s:%d:%d: %s: no host function named "
                       "'%s' is registered (see "
                       "xrt_client_register_host_function)", op->loc.file,
                       (int)op->loc.line, (int)op->loc.col, op->name, target);
  }
  return XRT_OK;
}

static xrt_status xrt__entry_shapes(xrt__executable *e) {
  const xrt_ir_func *f = &e->program->module->funcs[e->entry];
  e->num_inputs = f->body.num_args;
  e->num_outputs = f->num_results;
  e->inputs = (xrt_shape *)xrt__calloc(&e->client->allocator,
                                       (size_t)e->num_inputs + 1,
                                       sizeof(xrt_shape));
  e->outputs = (xrt_shape *)xrt__calloc(&e->client->allocator,
                                        (size_t)e->num_outputs + 1,
                                        sizeof(xrt_shape));
  if (!e->inputs || !e->outputs)
    return xrt__nomem("the executable's input and output shapes");
  for (int i = 0; i < e->num_inputs + e->num_outputs; i++) {
    bool in = i < e->num_inputs;
    const xrt_ir_type *t = in ? &f->value_types[f->body.args[i]]
                              : &f->result_types[i - e->num_inputs];
    if (t->kind != XRT_TYPE_TENSOR)
      return xrt__fail(XRT_UNIMPLEMENTED, "%s:%d:%d: @%s: %s %d is not a "
                       "tensor; only tensors cross the entry function's "
                       "boundary", f->loc.file, (int)f->loc.line,
                       (int)f->loc.col, f->name, in ? "argument" : "result",
                       in ? i : i - e->num_inputs);
    if (in) e->inputs[i] = t->shape;
    else e->outputs[i - e->num_inputs] = t->shape;
  }
  return XRT_OK;
}

/* Frees an executable (its handle is already invalid). */
/* Frees what a dead executable holds (its handle is dead) and keeps the
 * shell, with its handle slot, for the next compile: shells are freed only
 * with the client, which makes the lock-free xrt__hpin safe. */
static void xrt__exe_shared_unref(struct xrt__exe_shared *sh); /* 12b */

static void xrt__executable_destroy(xrt__executable *e) {
  xrt__client *c = e->client;
  if (e->shared) {
    xrt__exe_shared_unref(e->shared); /* it owns what the fields point to */
    e->shared = NULL;
  } else {
    if (e->pexe && c->api->executable_destroy)
      c->api->executable_destroy(e->pexe);
    xrt__free(&c->allocator, e->bindings);
    xrt__free(&c->allocator, e->inputs);
    xrt__free(&c->allocator, e->outputs);
    xrt__free(&c->allocator, e->assignment);
    if (e->program) xrt__program_unref(e->program);
  }
  e->pexe = NULL;
  e->bindings = NULL;
  e->inputs = e->outputs = NULL;
  e->assignment = NULL;
  e->program = NULL;
  xrt__spin_lock(&c->objs_lock);
  xrt__link_remove(&e->link);
  xrt__link_add(&c->free_exes, &e->link);
  xrt__spin_unlock(&c->objs_lock);
}

/* A zeroed executable: a recycled shell (keeping its handle slot) or new. */
static xrt__executable *xrt__executable_obj(xrt__client *c) {
  xrt__executable *e = NULL;
  xrt__spin_lock(&c->objs_lock);
  if (c->free_exes.next != &c->free_exes) {
    e = (xrt__executable *)(void *)c->free_exes.next;
    xrt__link_remove(&e->link);
  }
  xrt__spin_unlock(&c->objs_lock);
  if (!e) {
    e = (xrt__executable *)xrt__calloc(&c->allocator, 1, sizeof *e);
    if (e) xrt__link_init(&e->link);
    return e;
  }
  /* Zero the fields between the count (0, so stale lookups are refused;
   * only atomic accesses) and the handle (its slot is kept). */
  size_t from = offsetof(xrt__executable, program);
  memset((char *)e + from, 0, offsetof(xrt__executable, handle) - from);
  return e;
}

static void xrt__executable_unref(xrt__executable *e) {
  if (atomic_fetch_sub(&e->refs, 1) == 1) xrt__executable_destroy(e);
}

/* The launch shape and device assignment of an executable: options, else
 * the module's mhlo.num_replicas / num_partitions, logical id i on device
 * i. */
static xrt_status xrt__mp_executable_launch(xrt__executable *e,
                                            const xrt_compile_options *o);
static void xrt__mp_compile_args(const xrt__executable *e,
                                 xrt_plugin_compile_args *a);
static xrt_device *xrt__mp_device_of(const xrt__executable *e, int logical);
static xrt_status xrt__mp_not_here(const xrt__executable *e, int logical);
static xrt_status xrt__mp_execute_multi(
    xrt__executable *e, xrt_buffer *const *const *argument_lists,
    int num_lists, int num_args, xrt_buffer **const *output_lists,
    int num_outputs, const xrt_execute_options *options,
    xrt_event **out_done);
static xrt_status xrt__executable_launch(xrt__executable *e,
                                         const xrt_compile_options *o) {
  const xrt_ir_module *m = e->program->module;
  xrt__client *c = e->client;
  if (c->mp) return xrt__mp_executable_launch(e, o);
  int64_t R = o && o->num_replicas ? o->num_replicas : m->num_replicas;
  int64_t P = o && o->num_partitions ? o->num_partitions : m->num_partitions;
  if (R < 1 || P < 1)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_replicas (%" PRId64 ") and "
                     "num_partitions (%" PRId64 ") must be at least 1", R, P);
  if (R * P > c->num_devices)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%" PRId64 " replica(s) x %" PRId64
                     " partition(s) need %" PRId64 " devices, the client has "
                     "%d", R, P, R * P, c->num_devices);
  e->num_replicas = (int32_t)R;
  e->num_partitions = (int32_t)P;
  e->assignment = (int32_t *)xrt__calloc(&c->allocator, (size_t)(R * P),
                                         sizeof(int32_t));
  if (!e->assignment) return xrt__nomem("the executable's device assignment");
  for (int64_t i = 0; i < R * P; i++) {
    int dev = o && o->device_assignment ? o->device_assignment[i] : (int)i;
    if (dev < 0 || dev >= c->num_devices)
      return xrt__fail(XRT_INVALID_ARGUMENT, "device_assignment[%" PRId64 "] "
                       "is %d, outside 0..%d", i, dev, c->num_devices - 1);
    for (int64_t j = 0; j < i; j++)
      if (e->assignment[j] == dev)
        return xrt__fail(XRT_INVALID_ARGUMENT, "device_assignment[%" PRId64
                         "] and [%" PRId64 "] are both device %d", j, i, dev);
    e->assignment[i] = dev;
  }
  return XRT_OK;
}

/* Whether a region is cheap to run and talks to no other participant or
 * the host: no loops, collectives, host calls or ops whose cost grows
 * beyond their operand and result sizes, and at most *budget elements
 * read and written in all (which it decrements). */
static bool xrt__region_cheap(const xrt_ir_module *m, const xrt_ir_func *f,
                              const xrt_ir_region *r, int64_t *budget,
                              int depth) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    const xrt_ir_op *op = &r->ops[i];
    switch (op->code) {
    case XRT_OP_IF: case XRT_OP_CASE: case XRT_OP_FUNC_CALL:
      break;
    case XRT_OP_WHILE: case XRT_OP_ALL_GATHER: case XRT_OP_ALL_REDUCE:
    case XRT_OP_ALL_TO_ALL: case XRT_OP_COLLECTIVE_BROADCAST:
    case XRT_OP_COLLECTIVE_PERMUTE: case XRT_OP_COLLECTIVE_REDUCE:
    case XRT_OP_REDUCE_SCATTER: case XRT_OP_SEND: case XRT_OP_RECV:
    case XRT_OP_INFEED: case XRT_OP_OUTFEED: case XRT_OP_CUSTOM_CALL:
    case XRT_OP_DOT: case XRT_OP_DOT_GENERAL: case XRT_OP_CONVOLUTION:
    case XRT_OP_DYNAMIC_CONV: case XRT_OP_FFT: case XRT_OP_CHOLESKY:
    case XRT_OP_TRIANGULAR_SOLVE: case XRT_OP_CHLO_RAGGED_DOT:
    case XRT_OP_CHLO_SCAN: case XRT_OP_COMPOSITE:
      return false;
    default:
      if (op->num_regions) return false; /* a region per element or window */
      break;
    }
    for (int32_t k = 0; k < op->num_operands + op->num_results; k++) {
      int32_t v = k < op->num_operands ? op->operands[k]
                                       : op->results[k - op->num_operands];
      const xrt_ir_type *t = &f->value_types[v];
      if (t->kind == XRT_TYPE_TENSOR) *budget -= xrt_shape_numel(&t->shape);
    }
    if (*budget < 0 || depth > 8) return false;
    for (int32_t k = 0; k < op->num_regions; k++)
      if (!xrt__region_cheap(m, f, &op->regions[k], budget, depth + 1))
        return false;
    if (op->code == XRT_OP_FUNC_CALL) {
      if (op->callee < 0 || op->callee >= m->num_funcs) return false;
      const xrt_ir_func *g = &m->funcs[op->callee];
      if (!xrt__region_cheap(m, g, &g->body, budget, depth + 1)) return false;
    }
  }
  return true;
}

static xrt_status xrt__executable_build(xrt__executable *e,
                                        const xrt_compile_options *o) {
  xrt__client *c = e->client;
  const xrt_ir_module *m = e->program->module;
  xrt_status s = xrt__find_entry(m, o ? o->entry : NULL, &e->entry);
  if (s || (s = xrt__executable_launch(e, o)) || (s = xrt__entry_shapes(e)) ||
      (s = xrt__bind_custom_calls(e)))
    return s;
  int64_t budget = 1 << 14;
  /* XRT_NO_INLINE=1 sends every launch through the device queues (to
   * measure or debug them). */
  const char *no_inline = getenv("XRT_NO_INLINE");
  e->inline_ok = !(no_inline && *no_inline && *no_inline != '0') &&
                 xrt__region_cheap(m, &m->funcs[e->entry],
                                   &m->funcs[e->entry].body, &budget, 0);
  xrt_plugin_compile_args args = {sizeof args, m, e->entry, e->bindings,
                                  e->num_replicas, e->num_partitions,
                                  e->assignment, NULL, 0, 0, 0, 0, NULL, NULL,
                                  0};
  xrt__mp_compile_args(e, &args);
  xrt_plugin_error err = {{0}};
  if ((s = xrt__plugin_check_version(c->reg, m))) return s;
  XRT__PLUGIN_NEED(c, compile);
  XRT__STAT(c, COMPILES, 1);
  if ((s = c->api->compile(c->pc, &args, &e->pexe, &err)))
    return xrt__fail_plugin(s, c->api->name, &err);
  if (!e->pexe)
    return xrt__fail(XRT_INTERNAL, "plugin '%s': compile returned OK without "
                     "an executable", c->api->name);
  return XRT_OK;
}

/* Gives a built executable its count and handle (the next generation of
 * a recycled shell's slot, else a new one). */
static xrt_status xrt__executable_publish(xrt__executable *e) {
  atomic_store_explicit(&e->refs, 1, memory_order_release);
  e->handle = e->handle ? xrt__hrenew(e->handle, XRT__H_EXECUTABLE)
                        : xrt__hnew(e, XRT__H_EXECUTABLE);
  if (e->handle) return XRT_OK;
  atomic_store_explicit(&e->refs, 0, memory_order_relaxed); /* unreachable */
  return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
}

/* Compiles a program for a client; the executable takes a reference. */
static xrt_status xrt__compile(xrt__client *c, xrt__program *p,
                               const xrt_compile_options *o,
                               xrt_executable **out) {
  xrt__executable *e = xrt__executable_obj(c);
  if (!e) return xrt__nomem("the executable");
  e->client = c;
  e->program = p;
  atomic_fetch_add(&p->refs, 1);
  int64_t t0 = xrt__compile_begin();
  xrt_status s = xrt__executable_build(e, o);
  if (!s) s = xrt__executable_publish(e);
  if (s) {
    xrt__executable_destroy(e);
    return s;
  }
  e->name = p->module->funcs[e->entry].name;
  e->module_name = p->module->name;
  if (t0) xrt__compiled(c, e->module_name, e->name, t0);
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->executables, &e->link);
  xrt__spin_unlock(&c->objs_lock);
  *out = (xrt_executable *)e->handle;
  return XRT_OK;
}

xrt_status xrt_compile(xrt_client *client, const char *text, size_t len,
                       const xrt_compile_options *options,
                       xrt_executable **out_executable) {
  XRT__CHECK_ARG(out_executable, "out_executable is NULL");
  *out_executable = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(text || len == 0, "text is NULL");
  if (xrt__cache_wanted(c, options)) /* section 12b */
    return xrt__cache_compile(c, text ? text : "", len, NULL, options,
                              out_executable);
  xrt__program *p;
  xrt_status s = xrt__program_create(c->allocator, text ? text : "", len,
                                     options, &p);
  if (s) return s;
  s = xrt__compile(c, p, options, out_executable);
  xrt__program_unref(p);
  return s;
}

xrt_status xrt_compile_program(xrt_client *client, const xrt_program *program,
                               const xrt_compile_options *options,
                               xrt_executable **out_executable) {
  XRT__CHECK_ARG(out_executable, "out_executable is NULL");
  *out_executable = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__program *p = xrt__program_get(program);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(p, "invalid or released program");
  if (p->has_digest && xrt__cache_wanted(c, options)) /* section 12b */
    return xrt__cache_compile(c, NULL, 0, p, options, out_executable);
  return xrt__compile(c, p, options, out_executable);
}

/* A lookup without a reference: only for fields fixed at creation
 * (client, shapes) while the caller's handle stays live. */
static xrt__executable *xrt__executable_get(const xrt_executable *e) {
  return (xrt__executable *)xrt__hget(e, XRT__H_EXECUTABLE);
}

static xrt__executable *xrt__executable_acquire(const xrt_executable *h) {
  bool stale;
  xrt__executable *e = (xrt__executable *)xrt__hpin(
      h, XRT__H_EXECUTABLE, offsetof(xrt__executable, refs), &stale);
  if (stale) { /* released meanwhile */
    xrt__executable_unref(e);
    return NULL;
  }
  return e;
}

xrt_status xrt_executable_release(xrt_executable *executable) {
  if (!executable) return XRT_OK;
  xrt__executable *e =
      (xrt__executable *)xrt__hrevoke(executable, XRT__H_EXECUTABLE);
  XRT__CHECK_ARG(e, "invalid or already released executable");
  xrt__executable_unref(e);
  return XRT_OK;
}

/* An int field of a live executable, or -1. */
static int xrt__executable_int(const xrt_executable *executable,
                               size_t field) {
  xrt__executable *e = xrt__executable_acquire(executable);
  if (!e) return -1;
  int v;
  if (field == offsetof(xrt__executable, num_inputs)) v = e->num_inputs;
  else if (field == offsetof(xrt__executable, num_outputs)) v = e->num_outputs;
  else if (field == offsetof(xrt__executable, num_replicas)) v = e->num_replicas;
  else v = e->num_partitions;
  xrt__executable_unref(e);
  return v;
}

int xrt_executable_num_inputs(const xrt_executable *executable) {
  return xrt__executable_int(executable, offsetof(xrt__executable, num_inputs));
}

int xrt_executable_num_outputs(const xrt_executable *executable) {
  return xrt__executable_int(executable,
                             offsetof(xrt__executable, num_outputs));
}

int xrt_executable_num_replicas(const xrt_executable *executable) {
  return xrt__executable_int(executable,
                             offsetof(xrt__executable, num_replicas));
}

int xrt_executable_num_partitions(const xrt_executable *executable) {
  return xrt__executable_int(executable,
                             offsetof(xrt__executable, num_partitions));
}

xrt_device *xrt_executable_device(const xrt_executable *executable,
                                  int logical_id) {
  xrt__executable *e = xrt__executable_acquire(executable);
  if (!e) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_executable_device: invalid "
              "executable");
    return NULL;
  }
  xrt_device *d = NULL;
  int n = e->num_replicas * e->num_partitions;
  if (logical_id < 0 || logical_id >= n)
    xrt__fail(XRT_OUT_OF_RANGE, "logical id %d is outside 0..%d", logical_id,
              n - 1);
  else
    d = e->assignment[logical_id] < 0 /* another process's */
            ? xrt__mp_device_of(e, logical_id)
            : (xrt_device *)e->client->devices[e->assignment[logical_id]].handle;
  xrt__executable_unref(e);
  return d;
}

static xrt_status xrt__executable_shape(const xrt_executable *executable,
                                        int index, bool input, xrt_shape *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__executable *e = xrt__executable_acquire(executable);
  XRT__CHECK_ARG(e, "invalid executable");
  int n = input ? e->num_inputs : e->num_outputs;
  xrt_status s = XRT_OK;
  if (index < 0 || index >= n)
    s = xrt__fail(XRT_OUT_OF_RANGE, "%s index %d is outside 0..%d",
                  input ? "input" : "output", index, n - 1);
  else
    *out = input ? e->inputs[index] : e->outputs[index];
  xrt__executable_unref(e);
  return s;
}

xrt_status xrt_executable_input_shape(const xrt_executable *executable,
                                      int index, xrt_shape *out) {
  return xrt__executable_shape(executable, index, true, out);
}

xrt_status xrt_executable_output_shape(const xrt_executable *executable,
                                       int index, xrt_shape *out) {
  return xrt__executable_shape(executable, index, false, out);
}

const char *xrt_executable_name(const xrt_executable *executable) {
  xrt__executable *e = xrt__executable_acquire(executable);
  if (!e) return NULL;
  const char *name = e->name;
  xrt__executable_unref(e);
  return name;
}

/* ======================================================================
 * 12b. Compilation cache
 *
 * Keys.  XXH3-128 over: a format tag; the client's digest (plugin name
 * and version, device count, device kinds, and the topology fields that
 * do not name this process: process_count, local_world_size, so that the
 * processes of one job share a persistent store; for a client of several
 * processes, every process's device count instead of the device count
 * and local_world_size, which may differ between processes); the options
 * that change the result (entry, num_replicas, num_partitions, the device
 * assignment; not filename or line_offset); the program text.  Unless
 * cache_keep_locations, the text is read as tokens: comments (// to the
 * end of the line), debug locations (loc(...) with nested parentheses
 * and strings, with the whitespace before them, and the "#locN =" of
 * location alias lines) dropped, and every other run of whitespace read
 * as one space, so that programs differing only in those share a key.  String literals are read verbatim.
 *
 * Hits must cost about one hash of the text (the benchmark is 2 us and 3x
 * XXH3 for 10 KB), so a compile first takes a fingerprint: XXH3-128 of
 * the raw bytes and the options, looked up in a small direct-mapped memo
 * that maps fingerprints to canonical keys.  Only a memo miss reads the
 * text as tokens.  A parsed program (xrt_compile_program) carries both
 * text digests from xrt_program_parse.
 *
 * In memory.  A hash table of entries by key under one mutex per client.
 * A miss inserts a COMPILING entry and compiles outside the lock; callers
 * of that key meanwhile wait on the condition variable and count as hits.
 * A finished entry holds a reference on an xrt__exe_shared (what the
 * plugin compiled, the program it came from, shapes, launch shape and
 * host bindings); every caller gets its own executable handle borrowing
 * those fields (section 12's xrt__executable, its `shared` set), so
 * releasing one handle never affects another, and execution reads the
 * same fields as before.  Failures that depend only on the program and
 * options (not NOT_FOUND: a host function registered later may fix it;
 * not RESOURCE_EXHAUSTED, INTERNAL and other transient codes) are kept
 * with their status and message.  A hit on an executable that calls the
 * host checks that the client's host functions for its targets are still
 * those it was compiled with; if one changed it compiles afresh.
 *
 * Bytes.  An entry is charged: its own records (entry, shared object,
 * shapes, device assignment, host targets), the arena of the parsed
 * program it keeps alive, the same again for the plugin's executable (the
 * core cannot see its size; plans are about as large as the IR), or, for
 * an executable loaded from the store, twice the payload; a failure its
 * message.  Entries beyond compile_cache_bytes are dropped least recently
 * used first; an entry larger than the whole budget is not kept.
 *
 * Persistent store.  After an in-memory miss, when the client has a
 * cache_store and the plugin serializes (ABI 1.1), store->load(key, "name
 * version") is tried.  The payload is this core's format (below) wrapping
 * the plugin's bytes; every field is checked, and anything wrong is a
 * warning, a store error and a normal compile.  A compile is then offered
 * to store->save with its duration.  Aliases (raw text to key, see
 * "aliases" below) spare a fresh process the read of the text as tokens.
 * A multi-process client shares the store: stored device assignments are
 * global ids, placed in each process on load (its participants' processes
 * go to the plugin as at compile), and only process 0 saves.
 * ==================================================================== */

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Multi-process clients (the helpers are in section 13a, which holds
 * the process table): the global device count; the client's part of the
 * key, alike in every process; and a stored assignment (global ids at
 * a[2n..3n)) placed in this process (local devices at a[0..n), their
 * processes at a[n..2n)). */
static int xrt__cache_ndev(const xrt__client *c);
static void xrt__cache_mp_digest(const xrt__client *c, XXH3_state_t *st);
static void xrt__cache_mp_place(const xrt__client *c, int32_t *a, int64_t n);

/* What compiled handles share (see above). */
typedef struct xrt__exe_shared {
  _Atomic int refs;
  xrt__client *client;
  xrt__program *program; /* NULL: loaded from a store */
  void *pexe;
  int32_t entry;         /* -1 when program is NULL */
  xrt_host_binding *bindings;
  char **targets;        /* the host target of each binding */
  int32_t num_bindings;
  int num_inputs, num_outputs;
  xrt_shape *inputs, *outputs;
  int32_t num_replicas, num_partitions;
  int32_t *assignment;
  bool inline_ok;
  char *name, *module_name;
  /* The alias id (see "aliases") of the text it was compiled from; zero
   * when none.  An alias is trusted only for an entry that records it. */
  uint64_t source[2];
} xrt__exe_shared;

static void xrt__exe_shared_unref(xrt__exe_shared *sh) {
  if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1) return;
  xrt__client *c = sh->client;
  const xrt_allocator *a = &c->allocator;
  if (sh->pexe && c->api->executable_destroy)
    c->api->executable_destroy(sh->pexe);
  for (int32_t i = 0; sh->targets && i < sh->num_bindings; i++)
    xrt__free(a, sh->targets[i]);
  xrt__free(a, sh->targets);
  xrt__free(a, sh->bindings);
  xrt__free(a, sh->inputs);
  xrt__free(a, sh->outputs);
  xrt__free(a, sh->assignment);
  xrt__free(a, sh->name);
  xrt__free(a, sh->module_name);
  if (sh->program) xrt__program_unref(sh->program);
  xrt__free(a, sh);
}

/* STATEFUL: the program keeps state between executions (stablehlo.rng
 * draws a new sequence each run), so its executables are never shared:
 * the entry only tells later callers to compile on their own. */
enum { XRT__CE_COMPILING, XRT__CE_DONE, XRT__CE_FAILED, XRT__CE_STATEFUL };

typedef struct xrt__centry {
  struct xrt__centry *hnext;             /* hash chain */
  struct xrt__centry *prev, *next;       /* LRU, most recent first */
  uint64_t key[2];
  int state;                             /* XRT__CE_* */
  int pins;                              /* the compiler and its waiters */
  bool in_table, in_lru, freeing;
  xrt__exe_shared *sh;                   /* DONE */
  xrt_status code;                       /* FAILED */
  char *message;
  size_t bytes;
} xrt__centry;

/* One memo slot: a fingerprint and the key it stands for. */
typedef struct xrt__memo {
  uint64_t fp[2], key[2];
} xrt__memo;

#define XRT__MEMO_SLOTS 1024u
#define XRT__CACHE_MAX_MSG 2048

typedef struct xrt__cache {
  pthread_mutex_t mu;
  pthread_cond_t cv;  /* a COMPILING entry finished */
  size_t budget;      /* 0: no in-memory cache (the store alone) */
  const xrt_cache_store *store; /* NULL, or usable with this plugin */
  char identity[160]; /* "name version" */
  uint64_t digest[2]; /* the client's part of every key */
  xrt__centry **buckets;
  size_t nbuckets, count, bytes;
  xrt__centry lru;    /* sentinel */
  xrt__memo *memo;    /* XRT__MEMO_SLOTS, allocated at first use */
  _Atomic uint64_t hits, misses, evictions, failures_cached, store_hits,
      store_misses, store_writes, store_errors;
} xrt__cache;

#define XRT__CSTAT(k, field) \
  atomic_fetch_add_explicit(&(k)->field, 1, memory_order_relaxed)

/* ---- keys ---- */

static void xrt__key_hex(const uint64_t key[2],
                         char out[XRT_CACHE_KEY_CHARS + 1]) {
  snprintf(out, XRT_CACHE_KEY_CHARS + 1, "%016" PRIx64 "%016" PRIx64, key[0],
           key[1]);
}

static bool xrt__canon_ident(char ch) {
  unsigned char u = (unsigned char)ch;
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
         (u >= '0' && u <= '9') || u == '_' || u == '.' || u == '$' ||
         u == '@' || u == '%' || u == '#' || u >= 0x80;
}

static bool xrt__canon_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
         ch == '\v';
}

/* The end of the string literal that starts at t[i] (a quote). */
static size_t xrt__canon_string_end(const char *t, size_t n, size_t i) {
  for (i++; i < n; i++) {
    if (t[i] == '\\') i++;
    else if (t[i] == '"') return i + 1;
  }
  return n;
}

/* The end of the parenthesised group opening at t[i]. */
static size_t xrt__canon_group_end(const char *t, size_t n, size_t i) {
  int depth = 0;
  while (i < n) {
    char ch = t[i];
    if (ch == '"') {
      i = xrt__canon_string_end(t, n, i);
      continue;
    }
    if (ch == '(') depth++;
    else if (ch == ')' && --depth == 0) return i + 1;
    i++;
  }
  return n;
}

/* After "#loc..." at a line start: the position past "=", or 0. */
static size_t xrt__canon_alias(const char *t, size_t n, size_t i) {
  if (n - i < 4 || memcmp(t + i, "#loc", 4) != 0) return 0;
  size_t j = i + 4;
  while (j < n && xrt__canon_ident(t[j]) && t[j] != '#') j++;
  while (j < n && (t[j] == ' ' || t[j] == '\t')) j++;
  return j < n && t[j] == '=' ? j + 1 : 0;
}

/* The reader below skips to the next character that may change the text
 * (a class table) and hashes the runs kept as they are straight from the
 * input: several times faster than a token at a time, same text read. */
enum { XRT__CC_PLAIN, XRT__CC_BLANK, XRT__CC_WS, XRT__CC_SLASH, XRT__CC_QUOTE,
       XRT__CC_L };
static const unsigned char xrt__canon_class[256] = {
    [' '] = XRT__CC_BLANK, ['\t'] = XRT__CC_WS, ['\n'] = XRT__CC_WS,
    ['\r'] = XRT__CC_WS,   ['\f'] = XRT__CC_WS, ['\v'] = XRT__CC_WS,
    ['/'] = XRT__CC_SLASH, ['"'] = XRT__CC_QUOTE, ['l'] = XRT__CC_L};

/* Whether t[i] starts a debug location ("loc(" not inside a name). */
static bool xrt__canon_is_loc(const char *t, size_t n, size_t i) {
  return n - i >= 4 && memcmp(t + i, "loc(", 4) == 0 &&
         (i == 0 || !xrt__canon_ident(t[i - 1]));
}

/* Whether t[i] starts a comment. */
static bool xrt__canon_comment(const char *t, size_t n, size_t i) {
  return i + 1 < n && t[i] == '/' && t[i + 1] == '/';
}

/* The end of the string literal at t[i]: the next quote not escaped. */
static size_t xrt__canon_string_skip(const char *t, size_t n, size_t i) {
  for (i++; i < n;) {
    const char *q = (const char *)memchr(t + i, '"', n - i);
    if (!q) return n;
    size_t j = (size_t)(q - t), b = 0;
    while (b < j - i && t[j - 1 - b] == '\\') b++;
    if (!(b & 1)) return j + 1;
    i = j + 1;
  }
  return n;
}

/* The end of the run of text kept as is from t[i] (a token start): plain
 * characters, strings, single blanks before a token, '/' and 'l' that
 * start no comment or location. */
static size_t xrt__canon_run(const char *t, size_t n, size_t i) {
  const unsigned char *cls = xrt__canon_class;
  for (;;) {
    while (i < n && !cls[(unsigned char)t[i]]) i++;
    if (i >= n) return n;
    switch (cls[(unsigned char)t[i]]) {
    case XRT__CC_BLANK:
      if (i + 1 < n && cls[(unsigned char)t[i + 1]] < XRT__CC_BLANK) {
        i += 2;
        continue;
      }
      if (i + 1 < n && cls[(unsigned char)t[i + 1]] > XRT__CC_WS &&
          !xrt__canon_comment(t, n, i + 1) && !xrt__canon_is_loc(t, n, i + 1)) {
        i++;
        continue;
      }
      return i;
    case XRT__CC_WS:
      return i;
    case XRT__CC_SLASH:
      if (xrt__canon_comment(t, n, i)) return i;
      i++;
      continue;
    case XRT__CC_QUOTE:
      i = xrt__canon_string_skip(t, n, i);
      continue;
    default: /* 'l' */
      if (xrt__canon_is_loc(t, n, i)) return i;
      i++;
      continue;
    }
  }
}

/* Feeds the text as the key reads it (see the section comment). */
static void xrt__canon_feed(XXH3_state_t *st, const char *t, size_t n) {
  bool space = false, line_start = true, any = false;
  size_t i = 0;
  while (i < n) {
    char ch = t[i];
    if (xrt__canon_space(ch)) {
      space = any;
      if (ch == '\n') line_start = true;
      i++;
      continue;
    }
    if (xrt__canon_comment(t, n, i)) {
      const char *nl = (const char *)memchr(t + i, '\n', n - i);
      i = nl ? (size_t)(nl - t) : n;
      continue;
    }
    size_t past;
    if (line_start && ch == '#' && (past = xrt__canon_alias(t, n, i))) {
      i = past;
      line_start = false;
      continue;
    }
    line_start = false;
    if (ch == 'l' && xrt__canon_is_loc(t, n, i)) {
      i = xrt__canon_group_end(t, n, i + 3);
      space = false; /* "x loc(...)," reads as "x," */
      continue;
    }
    size_t end = xrt__canon_run(t, n, i);
    if (space) XXH3_128bits_update(st, " ", 1);
    XXH3_128bits_update(st, t + i, end - i);
    space = false;
    any = true;
    i = end;
  }
}

/* The text digest: [0] as tokens, [1] as bytes (cache_keep_locations). */
static void xrt__text_digest(const char *text, size_t len, bool keep,
                             uint64_t out[2]) {
  XXH128_hash_t h;
  if (keep) {
    h = XXH3_128bits(text, len);
  } else {
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_128bits_reset(&st);
    xrt__canon_feed(&st, text, len);
    h = XXH3_128bits_digest(&st);
  }
  out[0] = h.high64;
  out[1] = h.low64;
}

static void xrt__cache_digest_program(xrt__program *p, const char *text,
                                      size_t len) {
  xrt__text_digest(text, len, false, p->text_digest[0]);
  xrt__text_digest(text, len, true, p->text_digest[1]);
  p->has_digest = true;
}

/* The options of a key, as fixed-size words: the entry and the device
 * assignment by their own hashes.  false when they cannot be keyed: a
 * device assignment whose length depends on the module (num_replicas or
 * num_partitions 0) or that is out of range (compiles uncached and fails
 * or succeeds as it would without a cache). */
typedef struct xrt__key_opts {
  uint64_t words[8];
} xrt__key_opts;

static bool xrt__key_options(const xrt__client *c,
                             const xrt_compile_options *o, xrt__key_opts *k) {
  memset(k, 0, sizeof *k);
  k->words[0] = 0x787274636b657931ull; /* "xrtckey1" */
  if (!o) return true;
  if (o->entry) {
    k->words[1] = 1;
    k->words[2] = XXH3_64bits(o->entry, strlen(o->entry));
  }
  k->words[3] = (uint64_t)(uint32_t)o->num_replicas;
  k->words[4] = (uint64_t)(uint32_t)o->num_partitions;
  k->words[5] = o->cache_keep_locations ? 1 : 0;
  if (o->device_assignment) {
    int64_t n = (int64_t)o->num_replicas * o->num_partitions;
    if (o->num_replicas < 1 || o->num_partitions < 1 ||
        n > xrt__cache_ndev(c))
      return false;
    k->words[6] = 1;
    k->words[7] = XXH3_64bits(o->device_assignment,
                              (size_t)n * sizeof(int));
  }
  return true;
}

/* The key from the client's digest, the options and a text digest. */
static void xrt__key_make(const xrt__cache *k, const xrt__key_opts *ko,
                          const uint64_t text[2], uint64_t out[2]) {
  uint64_t w[2 + 8 + 2];
  memcpy(w, k->digest, 16);
  memcpy(w + 2, ko->words, sizeof ko->words);
  memcpy(w + 10, text, 16);
  XXH128_hash_t h = XXH3_128bits(w, sizeof w);
  out[0] = h.high64;
  out[1] = h.low64;
}

/* The client's part of every key (see the section comment). */
static void xrt__cache_client_digest(xrt__client *c, uint64_t out[2]) {
  XXH3_state_t st;
  XXH3_INITSTATE(&st);
  XXH3_128bits_reset(&st);
  const char *name = c->api->name ? c->api->name : "";
  const char *version = c->api->version ? c->api->version : "";
  XXH3_128bits_update(&st, name, strlen(name) + 1);
  XXH3_128bits_update(&st, version, strlen(version) + 1);
  if (c->mp) {
    xrt__cache_mp_digest(c, &st);
  } else {
    int32_t words[3] = {c->num_devices, c->topology.process_count,
                        c->topology.local_world_size};
    XXH3_128bits_update(&st, words, sizeof words);
  }
  for (int i = 0; i < c->num_devices; i++) {
    const char *kind = c->devices[i].desc.kind ? c->devices[i].desc.kind : "";
    XXH3_128bits_update(&st, kind, strlen(kind) + 1);
  }
  XXH128_hash_t h = XXH3_128bits_digest(&st);
  out[0] = h.high64;
  out[1] = h.low64;
}

xrt_status xrt_compile_cache_key(xrt_client *client, const char *text,
                                 size_t len,
                                 const xrt_compile_options *options,
                                 char out_key[XRT_CACHE_KEY_CHARS + 1]) {
  XRT__CHECK_ARG(out_key, "out_key is NULL");
  out_key[0] = 0;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(text || len == 0, "text is NULL");
  XRT__CHECK_ARG(c->cache, "invalid client");
  xrt__key_opts ko;
  if (!xrt__key_options(c, options, &ko))
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_compile_cache_key: a "
                     "device_assignment is keyed only with num_replicas and "
                     "num_partitions set (>= 1, fitting the client's %d "
                     "devices)", xrt__cache_ndev(c));
  uint64_t td[2], key[2];
  xrt__text_digest(text ? text : "", len,
                   options && options->cache_keep_locations, td);
  xrt__key_make(c->cache, &ko, td, key);
  xrt__key_hex(key, out_key);
  return XRT_OK;
}

/* ---- the client's cache object ---- */

/* A store is used only with a plugin that serializes executables. */
static bool xrt__cache_plugin_serializes(const xrt_plugin_api *api) {
  return XRT_STRUCT_HAS(api, xrt_plugin_api, executable_deserialize) &&
         api->executable_serialize && api->serialized_free &&
         api->executable_deserialize;
}

static xrt_status xrt__cache_create(xrt__client *c,
                                    const xrt_client_options *o) {
  const xrt_cache_store *store = o->cache_store;
  if (store && (store->struct_size < sizeof *store || !store->load ||
                !store->save || !store->release_data))
    return xrt__fail(XRT_INVALID_ARGUMENT, "cache_store: struct_size %zu "
                     "(want %zu) or a NULL load, save or release_data",
                     store->struct_size, sizeof *store);
  xrt__cache *k = (xrt__cache *)xrt__calloc(&c->allocator, 1, sizeof *k);
  if (!k) return xrt__nomem("the compilation cache");
  k->budget = o->compile_cache_bytes;
  k->store = store && xrt__cache_plugin_serializes(c->api) ? store : NULL;
  if (store && !k->store)
    xrt__log(XRT_LOG_INFO, "cache", "plugin '%s' does not serialize "
             "executables: its cache_store is not used", c->api->name);
  snprintf(k->identity, sizeof k->identity, "%.70s %.70s",
           c->api->name ? c->api->name : "",
           c->api->version ? c->api->version : "");
  k->lru.prev = k->lru.next = &k->lru;
  pthread_mutex_init(&k->mu, NULL);
  pthread_cond_init(&k->cv, NULL);
  xrt__cache_client_digest(c, k->digest);
  c->cache = k;
  return XRT_OK;
}

static bool xrt__cache_wanted(const xrt__client *c,
                              const xrt_compile_options *o) {
  const xrt__cache *k = c->cache;
  return k && !(o && o->cache_disable) && (k->budget || k->store);
}

static void xrt__centry_free(xrt__client *c, xrt__centry *e) {
  xrt__exe_shared_unref(e->sh);
  xrt__free(&c->allocator, e->message);
  xrt__free(&c->allocator, e);
}

/* Entries unlinked under the lock, freed after it (their executables'
 * destruction calls the plugin). */
typedef struct xrt__cfree {
  xrt__centry *head;
} xrt__cfree;

static void xrt__cfree_run(xrt__client *c, xrt__cfree *f) {
  while (f->head) {
    xrt__centry *e = f->head;
    f->head = e->hnext;
    xrt__centry_free(c, e);
  }
}

static size_t xrt__cache_bucket(const xrt__cache *k, const uint64_t key[2]) {
  return (size_t)(key[0] ^ (key[1] >> 7)) & (k->nbuckets - 1);
}

static xrt__centry *xrt__cache_find(xrt__cache *k, const uint64_t key[2]) {
  if (!k->nbuckets) return NULL;
  for (xrt__centry *e = k->buckets[xrt__cache_bucket(k, key)]; e;
       e = e->hnext)
    if (e->key[0] == key[0] && e->key[1] == key[1]) return e;
  return NULL;
}

/* Doubles the table (starting at 64 buckets); false when out of memory. */
static bool xrt__cache_grow(xrt__client *c, xrt__cache *k) {
  size_t n = k->nbuckets ? 2 * k->nbuckets : 64;
  xrt__centry **b = (xrt__centry **)xrt__calloc(&c->allocator, n, sizeof *b);
  if (!b) return false;
  xrt__centry **old = k->buckets;
  size_t old_n = k->nbuckets;
  k->buckets = b;
  k->nbuckets = n;
  for (size_t i = 0; i < old_n; i++)
    while (old[i]) {
      xrt__centry *e = old[i];
      old[i] = e->hnext;
      size_t h = xrt__cache_bucket(k, e->key);
      e->hnext = b[h];
      b[h] = e;
    }
  xrt__free(&c->allocator, old);
  return true;
}

static bool xrt__cache_insert(xrt__client *c, xrt__cache *k, xrt__centry *e) {
  if (k->count >= k->nbuckets && !xrt__cache_grow(c, k) && !k->nbuckets)
    return false;
  size_t h = xrt__cache_bucket(k, e->key);
  e->hnext = k->buckets[h];
  k->buckets[h] = e;
  e->in_table = true;
  k->count++;
  return true;
}

/* Queues a dropped entry on f once nobody waits on it. */
static void xrt__cache_release_if_unused(xrt__centry *e, xrt__cfree *f) {
  if (e->in_table || e->pins || e->freeing) return;
  e->freeing = true;
  e->hnext = f->head;
  f->head = e;
}

/* Takes e out of the table and the LRU list; queues it on f once nobody
 * waits on it (else the last pin frees it). */
static void xrt__cache_detach(xrt__cache *k, xrt__centry *e, xrt__cfree *f) {
  if (e->in_table) {
    xrt__centry **p = &k->buckets[xrt__cache_bucket(k, e->key)];
    while (*p != e) p = &(*p)->hnext;
    *p = e->hnext;
    e->hnext = NULL;
    e->in_table = false;
    k->count--;
  }
  if (e->in_lru) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->in_lru = false;
    k->bytes -= e->bytes;
  }
  xrt__cache_release_if_unused(e, f);
}

static void xrt__cache_lru_front(xrt__cache *k, xrt__centry *e) {
  if (e->in_lru) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
  } else {
    e->in_lru = true;
    k->bytes += e->bytes;
  }
  e->next = k->lru.next;
  e->prev = &k->lru;
  k->lru.next->prev = e;
  k->lru.next = e;
}

/* Keeps a finished entry (most recent) and evicts the least recently used
 * ones beyond the budget; one larger than the whole budget is not kept. */
static void xrt__cache_keep(xrt__cache *k, xrt__centry *e, xrt__cfree *f) {
  if (!e->in_table) return;
  if (e->bytes > k->budget) {
    xrt__cache_detach(k, e, f);
    XRT__CSTAT(k, evictions);
    return;
  }
  xrt__cache_lru_front(k, e);
  while (k->bytes > k->budget && k->lru.prev != &k->lru) {
    xrt__cache_detach(k, k->lru.prev, f);
    XRT__CSTAT(k, evictions);
  }
}

static void xrt__cache_free(xrt__client *c) {
  xrt__cache *k = c->cache;
  if (!k) return;
  xrt__cfree f = {NULL};
  for (size_t i = 0; i < k->nbuckets; i++)
    while (k->buckets[i]) xrt__cache_detach(k, k->buckets[i], &f);
  xrt__cfree_run(c, &f);
  xrt__free(&c->allocator, k->buckets);
  xrt__free(&c->allocator, k->memo);
  pthread_mutex_destroy(&k->mu);
  pthread_cond_destroy(&k->cv);
  xrt__free(&c->allocator, k);
  c->cache = NULL;
}

xrt_status xrt_client_clear_cache(xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c && c->cache, "invalid client");
  xrt__cache *k = c->cache;
  xrt__cfree f = {NULL};
  pthread_mutex_lock(&k->mu);
  for (size_t i = 0; i < k->nbuckets; i++)
    while (k->buckets[i]) xrt__cache_detach(k, k->buckets[i], &f);
  if (k->memo) memset(k->memo, 0, sizeof *k->memo * XRT__MEMO_SLOTS);
  pthread_mutex_unlock(&k->mu);
  xrt__cfree_run(c, &f);
  return XRT_OK;
}

xrt_status xrt_client_get_cache_stats(const xrt_client *client,
                                      xrt_cache_stats *out) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c && c->cache, "invalid client");
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__cache *k = c->cache;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&k->mu);
  out->entries = k->count;
  out->bytes = k->bytes;
  pthread_mutex_unlock(&k->mu);
  out->hits = atomic_load(&k->hits);
  out->misses = atomic_load(&k->misses);
  out->evictions = atomic_load(&k->evictions);
  out->failures_cached = atomic_load(&k->failures_cached);
  out->store_hits = atomic_load(&k->store_hits);
  out->store_misses = atomic_load(&k->store_misses);
  out->store_writes = atomic_load(&k->store_writes);
  out->store_errors = atomic_load(&k->store_errors);
  return XRT_OK;
}

/* ---- shared executables ---- */

/* Whether a failure depends only on the program and options (kept in
 * memory), or on something that may change (compiled again next time). */
static bool xrt__cache_failure_kept(xrt_status s) {
  switch (s) {
  case XRT_INVALID_ARGUMENT: case XRT_UNIMPLEMENTED:
  case XRT_FAILED_PRECONDITION: case XRT_OUT_OF_RANGE:
  case XRT_ALREADY_EXISTS: case XRT_DATA_LOSS:
    return true;
  default: /* NOT_FOUND (host functions), exhausted memory, INTERNAL... */
    return false;
  }
}

/* Frees what a failed build left in a scratch executable. */
static void xrt__exe_fields_free(xrt__client *c, xrt__executable *e) {
  if (e->pexe && c->api->executable_destroy)
    c->api->executable_destroy(e->pexe);
  xrt__free(&c->allocator, e->bindings);
  xrt__free(&c->allocator, e->inputs);
  xrt__free(&c->allocator, e->outputs);
  xrt__free(&c->allocator, e->assignment);
  if (e->program) xrt__program_unref(e->program);
}

static xrt__exe_shared *xrt__shared_new(xrt__client *c, int32_t nbind) {
  xrt__exe_shared *sh =
      (xrt__exe_shared *)xrt__calloc(&c->allocator, 1, sizeof *sh);
  if (!sh) return NULL;
  atomic_init(&sh->refs, 1);
  sh->client = c;
  sh->entry = -1;
  sh->num_bindings = nbind;
  sh->targets = (char **)xrt__calloc(&c->allocator, (size_t)nbind + 1,
                                     sizeof(char *));
  if (!sh->targets) {
    xrt__free(&c->allocator, sh);
    return NULL;
  }
  return sh;
}

/* Moves a built scratch executable into a new shared object. */
static xrt_status xrt__shared_adopt(xrt__client *c, xrt__executable *t,
                                    xrt__exe_shared **out) {
  const xrt__program *p = t->program;
  int32_t n = p->module->num_custom_calls;
  xrt__exe_shared *sh = xrt__shared_new(c, n);
  if (!sh) return xrt__nomem("a cached executable");
  const xrt_ir_func *f = &p->module->funcs[t->entry];
  sh->name = xrt__strdup_with(&c->allocator, f->name);
  sh->module_name = xrt__strdup_with(&c->allocator, p->module->name);
  bool ok = sh->name && sh->module_name;
  for (int32_t i = 0; ok && i < n; i++)
    ok = (sh->targets[i] = xrt__strdup_with(
              &c->allocator, xrt__host_target(p->custom_calls[i]))) != NULL;
  if (!ok) {
    sh->num_bindings = n;
    xrt__exe_shared_unref(sh);
    return xrt__nomem("a cached executable");
  }
  sh->program = t->program;
  sh->pexe = t->pexe;
  sh->entry = t->entry;
  sh->bindings = t->bindings;
  sh->num_inputs = t->num_inputs;
  sh->num_outputs = t->num_outputs;
  sh->inputs = t->inputs;
  sh->outputs = t->outputs;
  sh->num_replicas = t->num_replicas;
  sh->num_partitions = t->num_partitions;
  sh->assignment = t->assignment;
  sh->inline_ok = t->inline_ok;
  memset(t, 0, sizeof *t);
  *out = sh;
  return XRT_OK;
}

/* Whether a region uses an op whose executable keeps state. */
static bool xrt__region_stateful(const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    if (r->ops[i].code == XRT_OP_RNG) return true;
    for (int32_t k = 0; k < r->ops[i].num_regions; k++)
      if (xrt__region_stateful(&r->ops[i].regions[k])) return true;
  }
  return false;
}

static bool xrt__module_stateful(const xrt_ir_module *m) {
  for (int32_t f = 0; f < m->num_funcs; f++)
    if (xrt__region_stateful(&m->funcs[f].body)) return true;
  return false;
}

/* Parses (unless prog is given) and compiles into a shared object;
 * *compile_ns gets the time it took. */
static xrt_status xrt__shared_compile(xrt__client *c, const char *text,
                                      size_t len, xrt__program *prog,
                                      const xrt_compile_options *o,
                                      xrt__exe_shared **out,
                                      uint64_t *compile_ns) {
  int64_t start = xrt__now_ns();
  xrt__program *p = prog;
  xrt_status s = XRT_OK;
  if (p) atomic_fetch_add(&p->refs, 1);
  else if ((s = xrt__program_create(c->allocator, text, len, o, &p)))
    return s;
  xrt__executable t;
  memset(&t, 0, sizeof t);
  t.client = c;
  t.program = p;
  int64_t t0 = xrt__compile_begin();
  s = xrt__executable_build(&t, o);
  if (!s) s = xrt__shared_adopt(c, &t, out);
  if (s) {
    xrt__exe_fields_free(c, &t);
    return s;
  }
  if (t0) xrt__compiled(c, (*out)->module_name, (*out)->name, t0);
  int64_t end = xrt__now_ns();
  *compile_ns = end > start ? (uint64_t)(end - start) : 0;
  return XRT_OK;
}

/* A new executable handle over sh (whose reference it takes over). */
static xrt_status xrt__exe_from_shared(xrt__client *c, xrt__exe_shared *sh,
                                       xrt_executable **out) {
  xrt__executable *e = xrt__executable_obj(c);
  if (!e) {
    xrt__exe_shared_unref(sh);
    return xrt__nomem("an executable");
  }
  e->client = c;
  e->program = sh->program;
  e->entry = sh->entry;
  e->pexe = sh->pexe;
  e->bindings = sh->bindings;
  e->num_inputs = sh->num_inputs;
  e->num_outputs = sh->num_outputs;
  e->inputs = sh->inputs;
  e->outputs = sh->outputs;
  e->num_replicas = sh->num_replicas;
  e->num_partitions = sh->num_partitions;
  e->assignment = sh->assignment;
  e->shared = sh;
  e->name = sh->name;
  e->module_name = sh->module_name;
  e->inline_ok = sh->inline_ok;
  xrt_status s = xrt__executable_publish(e);
  if (s) {
    xrt__executable_destroy(e);
    return s;
  }
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->executables, &e->link);
  xrt__spin_unlock(&c->objs_lock);
  *out = (xrt_executable *)e->handle;
  return XRT_OK;
}

/* Whether the client's host functions are still those sh was bound to. */
static bool xrt__shared_bindings_current(xrt__client *c,
                                         const xrt__exe_shared *sh) {
  for (int32_t i = 0; i < sh->num_bindings; i++) {
    xrt_host_fn fn;
    void *user;
    if (!xrt__host_lookup(c, sh->targets[i], &fn, &user) ||
        fn != sh->bindings[i].fn || user != sh->bindings[i].user)
      return false;
  }
  return true;
}

/* The bytes an entry is charged (see the section comment). */
static size_t xrt__shared_bytes(const xrt__exe_shared *sh, size_t payload) {
  size_t n = sizeof(xrt__centry) + sizeof *sh +
             sizeof(xrt_shape) * (size_t)(sh->num_inputs + sh->num_outputs) +
             sizeof(int32_t) * (size_t)(sh->num_replicas * sh->num_partitions) +
             (sizeof(xrt_host_binding) + sizeof(char *)) *
                 (size_t)sh->num_bindings;
  for (int32_t i = 0; i < sh->num_bindings; i++)
    n += strlen(sh->targets[i]) + 1;
  if (sh->program) n += 2 * sh->program->arena.total;
  return n + 2 * payload;
}

/* ---- the store's payload ----
 *
 * Little-endian:  "XRTCEXE" NUL | u32 version (2) | u32 flags (bit 0:
 * inline_ok) | i32 num_replicas | i32 num_partitions | u32 num_inputs |
 * u32 num_outputs | u32 num_bindings | str entry name | str module name |
 * shapes (inputs, then outputs: u32 dtype, u32 rank, i64 dims[rank]) |
 * i32 device_assignment[replicas * partitions] (global device ids, so
 * that every process of a multi-process client reads the same bytes) |
 * str host target per binding | u64 source[2] (the alias id of the text
 * compiled, zero if none) | u64 plugin bytes | the plugin's bytes.
 * A str is a u32 length and that many bytes, no NUL.  Nothing may
 * follow.  Version 1 (no source) reads as unusable: compiled anew. */

#define XRT__PAYLOAD_VERSION 2u
#define XRT__PAYLOAD_MAX_STR 65536u
static const char xrt__payload_magic[8] = "XRTCEXE";

typedef struct xrt__wbuf {
  unsigned char *p;
  size_t len; /* written (or needed, when p is NULL) */
} xrt__wbuf;

static void xrt__w_bytes(xrt__wbuf *w, const void *s, size_t n) {
  if (w->p && n) memcpy(w->p + w->len, s, n);
  w->len += n;
}

static void xrt__w_u64(xrt__wbuf *w, uint64_t v, int bytes) {
  unsigned char b[8];
  for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * i));
  xrt__w_bytes(w, b, (size_t)bytes);
}

static void xrt__w_str(xrt__wbuf *w, const char *s) {
  size_t n = strlen(s);
  xrt__w_u64(w, n, 4);
  xrt__w_bytes(w, s, n);
}

/* Writes the payload of sh around the plugin's bytes (sizing it when w->p
 * is NULL). */
static void xrt__payload_write(xrt__wbuf *w, const xrt__exe_shared *sh,
                               const void *pbytes, size_t psize) {
  xrt__w_bytes(w, xrt__payload_magic, sizeof xrt__payload_magic);
  xrt__w_u64(w, XRT__PAYLOAD_VERSION, 4);
  xrt__w_u64(w, sh->inline_ok ? 1u : 0u, 4);
  xrt__w_u64(w, (uint32_t)sh->num_replicas, 4);
  xrt__w_u64(w, (uint32_t)sh->num_partitions, 4);
  xrt__w_u64(w, (uint32_t)sh->num_inputs, 4);
  xrt__w_u64(w, (uint32_t)sh->num_outputs, 4);
  xrt__w_u64(w, (uint32_t)sh->num_bindings, 4);
  xrt__w_str(w, sh->name);
  xrt__w_str(w, sh->module_name);
  for (int i = 0; i < sh->num_inputs + sh->num_outputs; i++) {
    const xrt_shape *s = i < sh->num_inputs ? &sh->inputs[i]
                                            : &sh->outputs[i - sh->num_inputs];
    xrt__w_u64(w, (uint32_t)s->dtype, 4);
    xrt__w_u64(w, (uint32_t)s->rank, 4);
    for (int d = 0; d < s->rank; d++) xrt__w_u64(w, (uint64_t)s->dims[d], 8);
  }
  int32_t n = sh->num_replicas * sh->num_partitions;
  const int32_t *gids = sh->client->mp ? sh->assignment + 2 * n
                                       : sh->assignment;
  for (int32_t i = 0; i < n; i++) xrt__w_u64(w, (uint32_t)gids[i], 4);
  for (int32_t i = 0; i < sh->num_bindings; i++) xrt__w_str(w, sh->targets[i]);
  xrt__w_u64(w, sh->source[0], 8);
  xrt__w_u64(w, sh->source[1], 8);
  xrt__w_u64(w, psize, 8);
  xrt__w_bytes(w, pbytes, psize);
}

/* A reader that turns every overrun into a failure with where it was. */
typedef struct xrt__rbuf {
  const unsigned char *p;
  size_t len, at;
  const char *why; /* the first problem, NULL while fine */
} xrt__rbuf;

static bool xrt__r_need(xrt__rbuf *r, size_t n, const char *what) {
  if (r->why) return false;
  if (r->len - r->at < n) {
    r->why = what;
    return false;
  }
  return true;
}

static uint64_t xrt__r_u64(xrt__rbuf *r, int bytes, const char *what) {
  if (!xrt__r_need(r, (size_t)bytes, what)) return 0;
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)r->p[r->at + (size_t)i] << (8 * i);
  r->at += (size_t)bytes;
  return v;
}

/* A string copied with a NUL (allocated), or NULL with r->why set. */
static char *xrt__r_str(xrt__rbuf *r, xrt__client *c, bool nonempty,
                        const char *what) {
  uint64_t n = xrt__r_u64(r, 4, what);
  if (r->why) return NULL;
  if (n > XRT__PAYLOAD_MAX_STR || (nonempty && n == 0)) {
    r->why = what;
    return NULL;
  }
  if (!xrt__r_need(r, (size_t)n, what)) return NULL;
  const unsigned char *s = r->p + r->at;
  if (memchr(s, 0, (size_t)n)) {
    r->why = what;
    return NULL;
  }
  char *d = (char *)xrt__alloc(&c->allocator, (size_t)n + 1);
  if (!d) {
    r->why = "out of host memory";
    return NULL;
  }
  memcpy(d, s, (size_t)n);
  d[n] = 0;
  r->at += (size_t)n;
  return d;
}

static bool xrt__r_shape(xrt__rbuf *r, xrt_shape *s) {
  memset(s, 0, sizeof *s);
  uint64_t dt = xrt__r_u64(r, 4, "a shape's dtype");
  uint64_t rank = xrt__r_u64(r, 4, "a shape's rank");
  if (r->why) return false;
  if (dt == XRT_DTYPE_INVALID || dt >= XRT_DTYPE_COUNT ||
      rank > XRT_MAX_RANK) {
    r->why = "a shape (dtype or rank out of range)";
    return false;
  }
  s->dtype = (xrt_dtype)dt;
  s->rank = (int32_t)rank;
  uint64_t numel = 1; /* kept below 2^48 so that byte sizes cannot wrap */
  for (uint64_t d = 0; d < rank; d++) {
    uint64_t v = xrt__r_u64(r, 8, "a shape's dims");
    if (r->why) return false;
    if (v > ((uint64_t)1 << 48) || (v && numel > ((uint64_t)1 << 48) / v)) {
      r->why = "a shape (negative or huge dimensions)";
      return false;
    }
    numel *= v;
    s->dims[d] = (int64_t)v;
  }
  return true;
}

/* The launch shape and assignment of a payload, checked against the
 * client and the options (whose nonzero fields are in the key). */
static bool xrt__r_launch(xrt__rbuf *r, const xrt__client *c,
                          const xrt_compile_options *o, xrt__exe_shared *sh) {
  int64_t n = (int64_t)sh->num_replicas * sh->num_partitions;
  int ndev = xrt__cache_ndev(c);
  if (sh->num_replicas < 1 || sh->num_partitions < 1 || n > ndev ||
      (o && o->num_replicas && o->num_replicas != sh->num_replicas) ||
      (o && o->num_partitions && o->num_partitions != sh->num_partitions)) {
    r->why = "the launch shape (replicas, partitions)";
    return false;
  }
  /* A multi-process client's executables hold 3n entries (section 13a);
   * the global ids read here go to the last n. */
  int64_t slots = c->mp ? 3 * n : n;
  sh->assignment = (int32_t *)xrt__calloc(&c->allocator, (size_t)slots,
                                          sizeof(int32_t));
  if (!sh->assignment) {
    r->why = "out of host memory";
    return false;
  }
  int32_t *gids = sh->assignment + (slots - n);
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = xrt__r_u64(r, 4, "the device assignment");
    if (r->why) return false;
    bool bad = v >= (uint64_t)ndev ||
               (o && o->device_assignment &&
                o->device_assignment[i] != (int)v);
    for (int64_t j = 0; j < i && !bad; j++) bad = gids[j] == (int32_t)v;
    if (bad) {
      r->why = "the device assignment";
      return false;
    }
    gids[i] = (int32_t)v;
  }
  if (c->mp) xrt__cache_mp_place(c, sh->assignment, n);
  return true;
}

/* Reads everything but the plugin's bytes into sh. */
static bool xrt__payload_read(xrt__rbuf *r, xrt__client *c,
                              const xrt_compile_options *o,
                              xrt__exe_shared **out) {
  if (!xrt__r_need(r, sizeof xrt__payload_magic, "the magic") ||
      memcmp(r->p, xrt__payload_magic, sizeof xrt__payload_magic) != 0) {
    r->why = "the magic";
    return false;
  }
  r->at = sizeof xrt__payload_magic;
  uint64_t version = xrt__r_u64(r, 4, "the version");
  uint64_t flags = xrt__r_u64(r, 4, "the flags");
  int32_t R = (int32_t)(uint32_t)xrt__r_u64(r, 4, "num_replicas");
  int32_t P = (int32_t)(uint32_t)xrt__r_u64(r, 4, "num_partitions");
  uint64_t nin = xrt__r_u64(r, 4, "num_inputs");
  uint64_t nout = xrt__r_u64(r, 4, "num_outputs");
  uint64_t nbind = xrt__r_u64(r, 4, "num_bindings");
  if (r->why) return false;
  if (version != XRT__PAYLOAD_VERSION || flags > 1) {
    r->why = version != XRT__PAYLOAD_VERSION ? "the version" : "the flags";
    return false;
  }
  /* Every shape takes 8 bytes and every string 4 at least: counts the
   * rest cannot hold are garbage, caught before allocating for them. */
  size_t rest = r->len - r->at;
  if (nin + nout > rest / 8 || nbind > rest / 4 || nin + nout > (1u << 24) ||
      nbind > (1u << 24)) {
    r->why = "the counts of inputs, outputs or bindings";
    return false;
  }
  xrt__exe_shared *sh = xrt__shared_new(c, (int32_t)nbind);
  if (!sh) {
    r->why = "out of host memory";
    return false;
  }
  *out = sh;
  sh->inline_ok = flags & 1;
  sh->num_replicas = R;
  sh->num_partitions = P;
  sh->num_inputs = (int)nin;
  sh->num_outputs = (int)nout;
  sh->name = xrt__r_str(r, c, true, "the entry name");
  sh->module_name = xrt__r_str(r, c, false, "the module name");
  if (r->why) return false;
  sh->inputs = (xrt_shape *)xrt__calloc(&c->allocator, nin + 1,
                                        sizeof(xrt_shape));
  sh->outputs = (xrt_shape *)xrt__calloc(&c->allocator, nout + 1,
                                         sizeof(xrt_shape));
  if (!sh->inputs || !sh->outputs) {
    r->why = "out of host memory";
    return false;
  }
  for (uint64_t i = 0; i < nin + nout; i++)
    if (!xrt__r_shape(r, i < nin ? &sh->inputs[i] : &sh->outputs[i - nin]))
      return false;
  if (!xrt__r_launch(r, c, o, sh)) return false;
  for (uint64_t i = 0; i < nbind; i++)
    if (!(sh->targets[i] = xrt__r_str(r, c, true, "a host target")))
      return false;
  sh->source[0] = xrt__r_u64(r, 8, "the source");
  sh->source[1] = xrt__r_u64(r, 8, "the source");
  uint64_t psize = xrt__r_u64(r, 8, "the plugin's size");
  if (!r->why && psize != r->len - r->at) r->why = "the plugin's size";
  if (o && o->entry && !r->why && strcmp(o->entry, sh->name) != 0)
    r->why = "the entry name";
  return !r->why;
}

/* Binds sh's host targets to the client's functions; false if one is
 * missing (the compile will then say which). */
static bool xrt__shared_bind(xrt__client *c, xrt__exe_shared *sh) {
  sh->bindings = (xrt_host_binding *)xrt__calloc(
      &c->allocator, (size_t)sh->num_bindings + 1, sizeof(xrt_host_binding));
  if (!sh->bindings) return false;
  for (int32_t i = 0; i < sh->num_bindings; i++)
    if (!xrt__host_lookup(c, sh->targets[i], &sh->bindings[i].fn,
                          &sh->bindings[i].user))
      return false;
  return true;
}

/* Whether sh was compiled from the text of alias id source (see
 * "aliases"); it is checked before the plugin reads its bytes. */
static bool xrt__shared_from(const xrt__exe_shared *sh,
                             const uint64_t source[2]) {
  return sh->source[0] == source[0] && sh->source[1] == source[1];
}

#ifdef XRT_HAVE_DISK_CACHE
/* In xrt_cache.c (not public API): whether store is a disk cache's, whose
 * load checked the file's checksum over every byte it returned. */
int xrt__disk_cache_verifies(const xrt_cache_store *store);
#endif

/* Whether the store's loads come integrity-checked (ABI 1.2's
 * bytes_verified): only xrt's own disk cache says so; a user's store
 * (even one wrapping the disk cache) does not. */
static bool xrt__store_verifies(const xrt_cache_store *store) {
#ifdef XRT_HAVE_DISK_CACHE
  return xrt__disk_cache_verifies(store) != 0;
#else
  (void)store;
  return false;
#endif
}

/* Rebuilds an executable from a payload: NULL (logged, counted) when any
 * part of it is wrong or the plugin refuses its bytes; NULL with
 * *foreign set (neither logged nor counted) when source is given and the
 * entry was compiled from another text. */
static xrt__exe_shared *xrt__payload_load(xrt__client *c, const char *hex,
                                          const void *data, size_t size,
                                          const xrt_compile_options *o,
                                          const uint64_t *source,
                                          bool *foreign) {
  xrt__cache *k = c->cache;
  xrt__rbuf r = {(const unsigned char *)data, data ? size : 0, 0, NULL};
  xrt__exe_shared *sh = NULL;
  bool ok = xrt__payload_read(&r, c, o, &sh);
  if (ok && source && !xrt__shared_from(sh, source)) {
    *foreign = true;
    xrt__exe_shared_unref(sh);
    return NULL;
  }
  if (ok && !xrt__shared_bind(c, sh)) {
    xrt__exe_shared_unref(sh); /* a host function is missing: compile */
    return NULL;
  }
  xrt_plugin_error err = {{0}};
  xrt_status s = XRT_OK;
  if (ok) {
    xrt_plugin_compile_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.entry = -1;
    args.host_bindings = sh->bindings;
    args.num_replicas = sh->num_replicas;
    args.num_partitions = sh->num_partitions;
    args.device_assignment = sh->assignment;
    if (c->mp) { /* as section 13a's compile arguments */
      args.participant_process =
          sh->assignment + (size_t)sh->num_replicas * sh->num_partitions;
      args.process_index = c->topology.process_index;
    }
    args.num_host_bindings = sh->num_bindings; /* ABI 1.2: checked */
    args.num_inputs = sh->num_inputs;
    args.num_outputs = sh->num_outputs;
    args.input_shapes = sh->inputs;
    args.output_shapes = sh->outputs;
    /* the plugin's bytes lie inside what the store's checksum covered */
    args.bytes_verified = xrt__store_verifies(k->store);
    s = c->api->executable_deserialize(c->pc, &args, r.p + r.at,
                                       r.len - r.at, &sh->pexe, &err);
    if (!s && !sh->pexe) s = XRT_INTERNAL;
  }
  if (ok && !s) return sh;
  XRT__CSTAT(k, store_errors);
  if (!ok)
    xrt__log(XRT_LOG_WARN, "cache", "cache store entry %s is unusable (%s, "
             "at byte %zu of %zu); compiling instead", hex, r.why, r.at,
             size);
  else
    xrt__log(XRT_LOG_WARN, "cache", "plugin '%s' refused cache store entry "
             "%s (%s: %s); compiling instead", c->api->name, hex,
             xrt_strerror(s), xrt__plugin_msg(&err));
  if (sh) {
    sh->pexe = NULL;
    xrt__exe_shared_unref(sh);
  }
  return NULL;
}

/* Asks the store for key: a shared object, or NULL (with *foreign set
 * when source is given and the entry was compiled from another text). */
static xrt__exe_shared *xrt__cache_store_load(xrt__client *c, const char *hex,
                                              const xrt_compile_options *o,
                                              size_t *payload,
                                              const uint64_t *source,
                                              bool *foreign) {
  xrt__cache *k = c->cache;
  void *data = NULL;
  size_t size = 0;
  xrt_status s = k->store->load(k->store->self, hex, k->identity, &data,
                                &size);
  if (s == XRT_NOT_FOUND) {
    XRT__CSTAT(k, store_misses);
    return NULL;
  }
  if (s) {
    XRT__CSTAT(k, store_errors);
    xrt__log(XRT_LOG_WARN, "cache", "cache store could not load %s (%s); "
             "compiling instead", hex, xrt_strerror(s));
    return NULL;
  }
  xrt__exe_shared *sh = xrt__payload_load(c, hex, data, size, o, source,
                                          foreign);
  if (data) k->store->release_data(k->store->self, data);
  if (sh) XRT__CSTAT(k, store_hits);
  *payload = size;
  return sh;
}

/* Offers a compiled executable to the store; failures are counted. */
static void xrt__cache_store_save(xrt__client *c, const char *hex,
                                  const xrt__exe_shared *sh,
                                  uint64_t compile_ns) {
  xrt__cache *k = c->cache;
  void *pbytes = NULL;
  size_t psize = 0;
  xrt_plugin_error err = {{0}};
  xrt_status s = c->api->executable_serialize(sh->pexe, &pbytes, &psize, &err);
  if (s == XRT_UNIMPLEMENTED) return; /* this executable stays in memory */
  if (s || (!pbytes && psize)) {
    XRT__CSTAT(k, store_errors);
    xrt__log(XRT_LOG_WARN, "cache", "plugin '%s' could not serialize %s "
             "(%s: %s)", c->api->name, hex, xrt_strerror(s),
             xrt__plugin_msg(&err));
    if (pbytes) c->api->serialized_free(pbytes);
    return;
  }
  xrt__wbuf w = {NULL, 0};
  xrt__payload_write(&w, sh, pbytes, psize);
  w.p = (unsigned char *)xrt__alloc(&c->allocator, w.len);
  if (w.p) {
    w.len = 0;
    xrt__payload_write(&w, sh, pbytes, psize);
    s = k->store->save(k->store->self, hex, k->identity, w.p, w.len,
                       compile_ns);
  } else {
    s = XRT_RESOURCE_EXHAUSTED;
  }
  c->api->serialized_free(pbytes);
  xrt__free(&c->allocator, w.p);
  if (s == XRT_OK) {
    XRT__CSTAT(k, store_writes);
  } else {
    XRT__CSTAT(k, store_errors);
    xrt__log(XRT_LOG_WARN, "cache", "cache store could not save %s (%s)", hex,
             xrt_strerror(s));
  }
}

/* ---- compiles through the cache ---- */

/* The compile the cache stands in for (options it cannot key). */
static xrt_status xrt__compile_uncached(xrt__client *c, const char *text,
                                        size_t len, xrt__program *prog,
                                        const xrt_compile_options *o,
                                        xrt_executable **out) {
  if (prog) return xrt__compile(c, prog, o, out);
  xrt__program *p;
  xrt_status s = xrt__program_create(c->allocator, text, len, o, &p);
  if (s) return s;
  s = xrt__compile(c, p, o, out);
  xrt__program_unref(p);
  return s;
}

/* The fingerprint of raw text and options (the memo's key); raw gets
 * the text's own XXH3-128. */
static void xrt__cache_fingerprint(const char *text, size_t len,
                                   const xrt__key_opts *ko, uint64_t out[2],
                                   uint64_t raw_out[2]) {
  XXH128_hash_t raw = XXH3_128bits(text, len);
  raw_out[0] = raw.high64;
  raw_out[1] = raw.low64;
  uint64_t w[2 + 8];
  w[0] = raw.high64;
  w[1] = raw.low64;
  memcpy(w + 2, ko->words, sizeof ko->words);
  XXH128_hash_t h = XXH3_128bits(w, sizeof w);
  out[0] = h.high64;
  out[1] = h.low64;
}

/* The memo slot of a fingerprint (k->mu held; NULL without a memo). */
static xrt__memo *xrt__cache_memo_slot(xrt__client *c, xrt__cache *k,
                                       const uint64_t fp[2], bool create) {
  if (!k->memo && create)
    k->memo = (xrt__memo *)xrt__calloc(&c->allocator, XRT__MEMO_SLOTS,
                                       sizeof(xrt__memo));
  return k->memo ? &k->memo[fp[0] & (XRT__MEMO_SLOTS - 1)] : NULL;
}

/* ---- aliases: raw text to key, in the store ----
 * A fresh process has an empty memo, and reading a large text as tokens
 * costs more than loading its executable.  So next to each executable the
 * store keeps an alias: key "a-" and 30 hex digits of XXH3-128 over the
 * client's digest, the options, the raw text's XXH3-128 and a tag (no
 * canonical key has a '-'), payload the 32 hex digits of the key.  A memo
 * miss tries the alias first; its key is used only when that key is in
 * memory already or its store entry loads, and that executable records
 * this alias id as its source (an alias is not trusted blindly: a stale
 * or forged one, behind a valid checksum, must not run another program);
 * else the text is read as tokens as before, with a warning when the key
 * read differs from the alias's.  An alias is written when the lookup
 * found none (or a useless one) and the executable was saved or loaded,
 * and after a parsed program's executable is saved.  An executable
 * compiled from text variants with one key (other locations) records the
 * first; the others' aliases cost a read of the text. */

#define XRT__ALIAS_PREFIX "a-"

/* What the key phase did with the store (see above). */
typedef struct xrt__cache_pre {
  xrt__exe_shared *sh;   /* loaded through the alias (the key's entry) */
  size_t payload;
  uint64_t tried[2];     /* a key whose store entry failed to load */
  bool has_tried;
  bool write_alias;      /* alias_id is set and should be written */
  uint64_t alias_id[2];
  uint64_t key_ns;       /* time spent reading the text as tokens */
  bool alias_foreign;    /* the alias named alias_key, compiled from */
  uint64_t alias_key[2]; /* another text (checked after the read) */
} xrt__cache_pre;

static void xrt__alias_make(const xrt__cache *k, const xrt__key_opts *ko,
                            const uint64_t raw[2], uint64_t out[2]) {
  uint64_t w[2 + 8 + 2 + 1];
  memcpy(w, k->digest, 16);
  memcpy(w + 2, ko->words, sizeof ko->words);
  memcpy(w + 10, raw, 16);
  w[12] = 0x7872746361696c31ull; /* "xrtcail1" */
  XXH128_hash_t h = XXH3_128bits(w, sizeof w);
  out[0] = h.high64;
  out[1] = h.low64;
}

static void xrt__alias_hex(const uint64_t id[2],
                           char out[XRT_CACHE_KEY_CHARS + 1]) {
  snprintf(out, XRT_CACHE_KEY_CHARS + 1, XRT__ALIAS_PREFIX "%016" PRIx64
           "%014" PRIx64, id[0], id[1] >> 8);
}

/* Parses 32 lowercase hex digits; false for anything else. */
static bool xrt__key_parse(const void *data, size_t size, uint64_t key[2]) {
  const char *p = (const char *)data;
  if (!p || size != XRT_CACHE_KEY_CHARS) return false;
  key[0] = key[1] = 0;
  for (size_t i = 0; i < XRT_CACHE_KEY_CHARS; i++) {
    char ch = p[i];
    unsigned v = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                 : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                                          : 16u;
    if (v == 16u) return false;
    key[i / 16] = key[i / 16] << 4 | v;
  }
  return true;
}

/* The key the alias names, or false (none, damaged, not a key). */
static bool xrt__alias_read(xrt__client *c, const char *ahex,
                            uint64_t key[2]) {
  xrt__cache *k = c->cache;
  void *data = NULL;
  size_t size = 0;
  xrt_status s = k->store->load(k->store->self, ahex, k->identity, &data,
                                &size);
  if (s) {
    if (s != XRT_NOT_FOUND)
      xrt__log(XRT_LOG_INFO, "cache", "cache store alias %s unusable (%s); "
               "reading the text", ahex, xrt_strerror(s));
    return false;
  }
  bool ok = xrt__key_parse(data, size, key);
  if (data) k->store->release_data(k->store->self, data);
  if (!ok) {
    XRT__CSTAT(k, store_errors);
    xrt__log(XRT_LOG_WARN, "cache", "cache store alias %s holds no key "
             "(%zu bytes); reading the text", ahex, size);
  }
  return ok;
}

static xrt__exe_shared *xrt__cache_store_load(xrt__client *c, const char *hex,
                                              const xrt_compile_options *o,
                                              size_t *payload,
                                              const uint64_t *source,
                                              bool *foreign);

/* The alias named key, whose entry was compiled from another text: the
 * caller reads the text, and says so if that gives another key. */
static bool xrt__alias_foreign(xrt__cache_pre *pre, const uint64_t key[2]) {
  memcpy(pre->alias_key, key, sizeof pre->alias_key);
  pre->alias_foreign = true;
  return false;
}

/* Resolves a memo miss through the store's alias: true with key set (and
 * pre->sh, unless the key is in memory already; k->mu held on return).
 * The alias is trusted only when its entry records that it was compiled
 * from the alias's text (sh->source); an entry in memory that cannot say
 * (still compiling, failed) sends the caller to read the text. */
static bool xrt__alias_resolve(xrt__client *c, const xrt_compile_options *o,
                               uint64_t key[2], xrt__cache_pre *pre) {
  xrt__cache *k = c->cache;
  char ahex[XRT_CACHE_KEY_CHARS + 1], hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__alias_hex(pre->alias_id, ahex);
  if (!xrt__alias_read(c, ahex, key)) return false;
  pthread_mutex_lock(&k->mu);
  xrt__centry *e = xrt__cache_find(k, key);
  bool done = e && e->state == XRT__CE_DONE;
  if (done && xrt__shared_from(e->sh, pre->alias_id)) return true;
  pthread_mutex_unlock(&k->mu);
  if (done) return xrt__alias_foreign(pre, key);
  if (e) return false;
  xrt__key_hex(key, hex);
  bool foreign = false;
  pre->sh = xrt__cache_store_load(c, hex, o, &pre->payload, pre->alias_id,
                                  &foreign);
  if (foreign) return xrt__alias_foreign(pre, key);
  if (!pre->sh) {
    memcpy(pre->tried, key, sizeof pre->tried);
    pre->has_tried = true;
    return false;
  }
  xrt__log(XRT_LOG_DEBUG, "cache", "cache alias %s -> %s", ahex, hex);
  pthread_mutex_lock(&k->mu);
  return true;
}

/* Writes pre's alias for key (after its executable was saved or loaded). */
static void xrt__alias_write(xrt__client *c, const xrt__cache_pre *pre,
                             const uint64_t key[2], uint64_t ns) {
  xrt__cache *k = c->cache;
  char ahex[XRT_CACHE_KEY_CHARS + 1], hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__alias_hex(pre->alias_id, ahex);
  xrt__key_hex(key, hex);
  xrt_status s = k->store->save(k->store->self, ahex, k->identity, hex,
                                XRT_CACHE_KEY_CHARS, ns);
  if (s)
    xrt__log(XRT_LOG_INFO, "cache", "cache store could not save alias %s "
             "(%s)", ahex, xrt_strerror(s));
}

/* An alias that named another text's entry (stale, damaged or forged
 * behind a valid checksum): said once per compile; the caller replaces
 * it (process 0) once the key's executable is saved or loaded. */
static void xrt__alias_stale(const xrt__cache_pre *pre,
                             const uint64_t key[2]) {
  char ahex[XRT_CACHE_KEY_CHARS + 1], named[XRT_CACHE_KEY_CHARS + 1],
      hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__alias_hex(pre->alias_id, ahex);
  xrt__key_hex(pre->alias_key, named);
  xrt__key_hex(key, hex);
  xrt__log(XRT_LOG_WARN, "cache", "cache store alias %s names %s, an "
           "executable compiled from another text; the text's key is %s",
           ahex, named, hex);
}

/* The key of a compile.  Returns with k->mu held. */
static void xrt__cache_key_locked(xrt__client *c, const char *text, size_t len,
                                  const xrt__program *prog,
                                  const xrt_compile_options *o,
                                  const xrt__key_opts *ko, uint64_t key[2],
                                  xrt__cache_pre *pre) {
  xrt__cache *k = c->cache;
  bool keep = o && o->cache_keep_locations;
  bool aliased = k->store && !keep;
  if (prog) {
    xrt__key_make(k, ko, prog->text_digest[keep], key);
    if (aliased) {
      xrt__alias_make(k, ko, prog->text_digest[1], pre->alias_id);
      pre->write_alias = true;
    }
    pthread_mutex_lock(&k->mu);
    return;
  }
  uint64_t fp[2], td[2], raw[2];
  xrt__cache_fingerprint(text, len, ko, fp, raw);
  if (aliased) xrt__alias_make(k, ko, raw, pre->alias_id);
  pthread_mutex_lock(&k->mu);
  xrt__memo *m = xrt__cache_memo_slot(c, k, fp, false);
  if (m && m->fp[0] == fp[0] && m->fp[1] == fp[1]) {
    key[0] = m->key[0];
    key[1] = m->key[1];
    return;
  }
  pthread_mutex_unlock(&k->mu);
  if (!aliased || !xrt__alias_resolve(c, o, key, pre)) {
    int64_t t0 = xrt__now_ns();
    xrt__log(XRT_LOG_DEBUG, "cache", "reading %zu bytes of text as tokens",
             len);
    xrt__text_digest(text, len, keep, td); /* the slow read, unlocked */
    xrt__key_make(k, ko, td, key);
    pre->key_ns = (uint64_t)(xrt__now_ns() - t0);
    pre->write_alias = aliased;
    pre->has_tried = pre->has_tried && pre->tried[0] == key[0] &&
                     pre->tried[1] == key[1];
    if (pre->alias_foreign &&
        (pre->alias_key[0] != key[0] || pre->alias_key[1] != key[1]))
      xrt__alias_stale(pre, key);
    pthread_mutex_lock(&k->mu);
  }
  if ((m = xrt__cache_memo_slot(c, k, fp, true))) {
    memcpy(m->fp, fp, sizeof m->fp);
    memcpy(m->key, key, sizeof m->key);
  }
}

static void xrt__cache_log(xrt__client *c, const char *what,
                           const uint64_t key[2], const char *entry) {
  XRT__UNUSED(c);
  if (!xrt_log_enabled(XRT_LOG_INFO, "cache")) return;
  char hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__key_hex(key, hex);
  xrt__log(XRT_LOG_INFO, "cache", "cache %s %s @%s", what, hex,
           entry ? entry : "main");
}

/* A hit on e (k->mu held; released here): waits for a compile in
 * progress, then shares its executable or its failure. */
static xrt_status xrt__cache_hit(xrt__client *c, xrt__centry *e,
                                 const char *text, size_t len,
                                 xrt__program *prog, const uint64_t key[2],
                                 const xrt_compile_options *o, int64_t t0,
                                 xrt_executable **out) {
  xrt__cache *k = c->cache;
  if (e->state == XRT__CE_COMPILING) {
    e->pins++;
    while (e->state == XRT__CE_COMPILING) pthread_cond_wait(&k->cv, &k->mu);
    e->pins--;
  }
  bool stateful = e->state == XRT__CE_STATEFUL;
  if (stateful) {
    XRT__CSTAT(k, misses);
  } else {
    XRT__CSTAT(k, hits);
    XRT__STAT(c, CACHE_HITS, 1);
  }
  xrt__exe_shared *sh = NULL;
  xrt_status code = XRT_OK;
  char msg[XRT__CACHE_MAX_MSG];
  if (e->in_lru) xrt__cache_lru_front(k, e);
  if (e->state == XRT__CE_DONE) {
    sh = e->sh;
    atomic_fetch_add_explicit(&sh->refs, 1, memory_order_relaxed);
  } else if (!stateful) {
    code = e->code;
    snprintf(msg, sizeof msg, "%s", e->message ? e->message : "out of memory");
  }
  xrt__cfree f = {NULL};
  xrt__cache_release_if_unused(e, &f); /* dropped while we waited */
  pthread_mutex_unlock(&k->mu);
  xrt__cfree_run(c, &f);
  if (stateful) return xrt__compile_uncached(c, text, len, prog, o, out);
  xrt__cache_log(c, "hit", key, sh ? sh->name : o ? o->entry : NULL);
  if (!sh) return xrt__fail(code, "%s", msg);
  if (t0) xrt__trace_cache_hit(c, "compile", sh->name, t0);
  return xrt__exe_from_shared(c, sh, out);
}

/* Records the outcome of e's compile (k->mu held): a shared object (s OK,
 * one reference for the entry taken here) or the failure in the thread's
 * last error. */
static void xrt__cache_settle(xrt__client *c, xrt__centry *e, xrt_status s,
                              xrt__exe_shared *sh, size_t payload,
                              xrt__cfree *f) {
  xrt__cache *k = c->cache;
  e->pins--;
  if (!s && sh->program && xrt__module_stateful(sh->program->module)) {
    e->state = XRT__CE_STATEFUL; /* sh stays its compiler's alone */
    e->bytes = sizeof *e;
  } else if (!s) {
    atomic_fetch_add_explicit(&sh->refs, 1, memory_order_relaxed);
    e->sh = sh;
    e->state = XRT__CE_DONE;
    e->bytes = xrt__shared_bytes(sh, payload);
  } else {
    e->state = XRT__CE_FAILED;
    e->code = s;
    e->message = xrt__strdup_with(&c->allocator, xrt_last_error());
    e->bytes = sizeof *e + (e->message ? strlen(e->message) + 1 : 0);
  }
  if (!s || xrt__cache_failure_kept(s)) {
    if (s && e->in_table) XRT__CSTAT(k, failures_cached);
    xrt__cache_keep(k, e, f);
  } else {
    xrt__cache_detach(k, e, f); /* waiters share it; later callers retry */
  }
  xrt__cache_release_if_unused(e, f); /* dropped while it compiled */
  pthread_cond_broadcast(&k->cv);
}

/* Whether this process writes the store: of a multi-process client only
 * process 0 does (the others would write the same bytes); the others say
 * what they did not write (XRT_LOG=info,cache). */
static bool xrt__cache_writer(xrt__client *c, const char *what,
                              const char *hex) {
  if (!c->mp || c->topology.process_index == 0) return true;
  xrt__log(XRT_LOG_INFO, "cache", "cache store: %s %s not written: process "
           "%d (process 0 writes the store)", what, hex,
           c->topology.process_index);
  return false;
}

/* A miss: the store, else a compile; e (may be NULL: no in-memory cache)
 * is settled for its waiters. */
static xrt_status xrt__cache_fill(xrt__client *c, const char *text,
                                  size_t len, xrt__program *prog,
                                  const xrt_compile_options *o,
                                  const uint64_t key[2], xrt__centry *e,
                                  xrt__cache_pre *pre,
                                  xrt_executable **out) {
  xrt__cache *k = c->cache;
  XRT__CSTAT(k, misses);
  char hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__key_hex(key, hex);
  size_t payload = pre->payload;
  uint64_t compile_ns = 0;
  xrt__exe_shared *sh = pre->sh;
  pre->sh = NULL; /* ours now */
  if (!sh && k->store && !pre->has_tried)
    sh = xrt__cache_store_load(c, hex, o, &payload, NULL, NULL);
  bool loaded = sh != NULL;
  xrt_status s =
      sh ? XRT_OK : xrt__shared_compile(c, text, len, prog, o, &sh,
                                        &compile_ns);
  if (!s && !loaded) /* still private: recorded before others see it */
    memcpy(sh->source, pre->alias_id, sizeof sh->source);
  if (e) {
    xrt__cfree f = {NULL};
    char saved[XRT__CACHE_MAX_MSG];
    if (s) snprintf(saved, sizeof saved, "%s", xrt_last_error());
    pthread_mutex_lock(&k->mu);
    xrt__cache_settle(c, e, s, sh, payload, &f);
    pthread_mutex_unlock(&k->mu);
    xrt__cfree_run(c, &f);
    if (s) xrt__fail(s, "%s", saved);
  }
  xrt__cache_log(c, "miss", key, sh ? sh->name : o ? o->entry : NULL);
  if (s) return s;
  /* A stateful program is compiled by each caller, never loaded. */
  if (k->store && !loaded && !xrt__module_stateful(sh->program->module)) {
    if (xrt__cache_writer(c, "executable", hex)) {
      xrt__cache_store_save(c, hex, sh, compile_ns);
      if (pre->write_alias) xrt__alias_write(c, pre, key, compile_ns);
    }
  } else if (loaded && pre->write_alias && !prog && /* none was found */
             xrt__cache_writer(c, "alias of", hex)) {
    xrt__alias_write(c, pre, key, pre->key_ns);
  }
  return xrt__exe_from_shared(c, sh, out);
}

static xrt_status xrt__cache_compile(xrt__client *c, const char *text,
                                     size_t len, xrt__program *prog,
                                     const xrt_compile_options *o,
                                     xrt_executable **out) {
  xrt__cache *k = c->cache;
  xrt__key_opts ko;
  if (!xrt__key_options(c, o, &ko))
    return xrt__compile_uncached(c, text, len, prog, o, out);
  int64_t t0 = xrt__trace_begin();
  uint64_t key[2];
  xrt__cache_pre pre;
  memset(&pre, 0, sizeof pre);
  xrt__cache_key_locked(c, text, len, prog, o, &ko, key, &pre);
  if (!k->budget) { /* the store alone */
    pthread_mutex_unlock(&k->mu);
    return xrt__cache_fill(c, text, len, prog, o, key, NULL, &pre, out);
  }
  xrt__cfree f = {NULL};
  xrt__centry *e = xrt__cache_find(k, key);
  if (e && e->state == XRT__CE_DONE && e->sh->num_bindings &&
      !xrt__shared_bindings_current(c, e->sh)) {
    xrt__cache_detach(k, e, &f); /* a host function changed: compile again */
    e = NULL;
  }
  if (e) {
    xrt_status s = xrt__cache_hit(c, e, text, len, prog, key, o, t0, out);
    xrt__exe_shared_unref(pre.sh); /* loaded while another caller did */
    return s;
  }
  e = (xrt__centry *)xrt__calloc(&c->allocator, 1, sizeof *e);
  if (e) {
    memcpy(e->key, key, sizeof e->key);
    e->state = XRT__CE_COMPILING;
    e->pins = 1;
    if (!xrt__cache_insert(c, k, e)) {
      xrt__free(&c->allocator, e);
      e = NULL;
    }
  }
  pthread_mutex_unlock(&k->mu);
  xrt__cfree_run(c, &f);
  if (!e) {
    xrt__exe_shared_unref(pre.sh);
    return xrt__compile_uncached(c, text, len, prog, o, out);
  }
  return xrt__cache_fill(c, text, len, prog, o, key, e, &pre, out);
}

/* ======================================================================
 * 13. Execution
 *
 * An execution is one participant of a launch (replica, partition) of
 * num_replicas * num_partitions participants.  Everything is validated and
 * allocated before anything is enqueued, so a failed call leaves nothing
 * behind.  A participant's outputs share its event as their ready event.
 * ==================================================================== */

#define XRT__MAX_IO 64 /* arguments and results kept on the stack */

/* Where one participant sits in its launch. */
typedef struct xrt__pos {
  uint64_t launch_id;
  int32_t replica, partition;
} xrt__pos;

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
static void xrt__msgf(char *dst, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, XRT__MSG_CAP, fmt, ap);
  va_end(ap);
}

static const char *xrt__exe_name(const xrt__executable *e) {
  return e->name;
}

/* Calls the plugin for one participant; on failure msg gets its message. */
static xrt_status xrt__plugin_execute(xrt__executable *e, int device,
                                      const xrt__pos *pos, void *const *in,
                                      int nin, void *const *out, int nout,
                                      const char *abort_message, char *msg) {
  xrt__client *c = e->client;
  xrt_plugin_execute_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.executable = e->pexe;
  a.device = device;
  a.launch_id = pos->launch_id;
  a.replica = pos->replica;
  a.partition = pos->partition;
  a.num_replicas = e->num_replicas;
  a.num_partitions = e->num_partitions;
  a.args = in;
  a.num_args = nin;
  a.outs = out;
  a.num_outs = nout;
  a.abort_message = abort_message;
  xrt_plugin_error err;
  err.message[0] = 0; /* not = {{0}}: zeroing 1 KiB per dispatch shows */
  if (!abort_message) XRT__STAT(c, EXECS, 1);
  if (!c->api->execute) {
    xrt__msgf(msg, "plugin '%s' does not implement execute", c->api->name);
    return XRT_UNIMPLEMENTED;
  }
  int64_t t0 = xrt__trace_begin();
  xrt_status s = c->api->execute(c->pc, &a, &err);
  if (t0)
    xrt__trace_named(c, device, "execute", e->module_name,
                     xrt__exe_name(e), t0);
  if (s) /* the simulator's messages carry the program location already */
    xrt__msgf(msg, "%s", xrt__plugin_msg(&err));
  return s;
}

/* Waits for a participant's inputs, then runs it (or, when an input
 * failed, lets the plugin release the launch's other participants). */
static xrt_status xrt__exec_run(xrt__device *d, xrt__task *t, char *msg) {
  xrt_status s = XRT_OK;
  xrt__pos pos = {t->launch_id, t->replica, t->partition};
  for (int i = 0; i < t->num_args && !s; i++) {
    xrt__event *ev = t->bufs[i]->ready;
    if (ev && (s = xrt__event_wait(ev)))
      xrt__msgf(msg, "argument %d: %s", i, ev->message);
  }
  if (s) {
    char ignored[XRT__MSG_CAP];
    xrt__plugin_execute(t->exe, d->index, &pos, t->mems, t->num_args,
                        t->mems + t->num_args, t->num_outs, msg, ignored);
    return s;
  }
  return xrt__plugin_execute(t->exe, d->index, &pos, t->mems, t->num_args,
                             t->mems + t->num_args, t->num_outs, NULL, msg);
}

/* Waits for src and copies its failure, if any, into msg. */
static xrt_status xrt__wait_input(xrt__buffer *src, char *msg) {
  xrt_status s = src->ready ? xrt__event_wait(src->ready) : XRT_OK;
  if (s) xrt__msgf(msg, "%s", src->ready->message);
  return s;
}

/* The plugin function a transfer task needs, if the plugin lacks it. */
static const char *xrt__transfer_lacks(const xrt_plugin_api *api, int kind) {
  switch (kind) {
  case XRT__T_WRITE: return api->buffer_write ? NULL : "buffer_write";
  case XRT__T_READ: return api->buffer_read ? NULL : "buffer_read";
  case XRT__T_COPY: return api->buffer_copy ? NULL : "buffer_copy";
  default: return api->inject_fault ? NULL : "inject_fault";
  }
}

static xrt_status xrt__transfer_run(xrt__device *d, xrt__task *t,
                                    char *msg) {
  xrt__client *c = d->client;
  xrt_plugin_error err = {{0}};
  xrt_status s = XRT_OK;
  const char *lacks = xrt__transfer_lacks(c->api, t->kind);
  if (lacks) {
    xrt__msgf(msg, "plugin '%s' does not implement %s", c->api->name, lacks);
    return XRT_UNIMPLEMENTED;
  }
  int64_t t0 = 0; /* traced transfers: their start */
  switch (t->kind) {
  case XRT__T_WRITE:
    XRT__STAT(c, H2D, 1);
    t0 = xrt__trace_begin();
    if (t->dst->bytes)
      s = c->api->buffer_write(c->pc, t->dst->device, t->dst->mem,
                               t->host_src, t->dst->bytes, &err);
    break;
  case XRT__T_READ:
    if ((s = xrt__wait_input(t->src, msg))) return s;
    XRT__STAT(c, D2H, 1);
    t0 = xrt__trace_begin();
    if (t->src->bytes)
      s = c->api->buffer_read(c->pc, t->src->device, t->src->mem,
                              t->host_dst, t->src->bytes, &err);
    break;
  case XRT__T_COPY:
    if ((s = xrt__wait_input(t->src, msg))) return s;
    XRT__STAT(c, COPIES, 1);
    XRT__STAT(c, BYTES_COPIED, t->src->bytes);
    t0 = xrt__trace_begin();
    if (t->src->bytes)
      s = c->api->buffer_copy(c->pc, t->src->device, t->src->mem,
                              t->dst->device, t->dst->mem, t->src->bytes,
                              &err);
    break;
  default: /* XRT__T_FAULT */
    s = c->api->inject_fault(c->pc, d->index, t->steps, &err);
    break;
  }
  if (t0 && !s)
    xrt__trace_transfer(c, d->index, t->kind == XRT__T_WRITE  ? "h2d"
                                     : t->kind == XRT__T_READ ? "d2h"
                                                              : "d2d",
                        t->kind == XRT__T_READ ? &t->src->shape
                                               : &t->dst->shape, t0);
  if (s)
    xrt__msgf(msg, "%s: %s", c->api->name, xrt__plugin_msg(&err));
  return s;
}

static void xrt__executable_unref(xrt__executable *e);

static void xrt__task_free(xrt__task *t, xrt__client *c) {
  xrt__buffer_unref(t->src);
  xrt__buffer_unref(t->dst);
  for (int i = 0; t->bufs && i < t->num_args + t->num_outs; i++)
    xrt__buffer_unref(t->bufs[i]);
  xrt__event_unref(t->done);
  if (t->exe) xrt__executable_unref(t->exe);
  xrt__free(&c->allocator, t);
}

/* A participant is done: the launch completes with the first failure when
 * its last participant is (a cause outranks the ABORTED of the peers it
 * released, whichever finished first). */
static void xrt__launch_finish(xrt__client *c, xrt__launch *l, xrt_status s,
                               const char *msg) {
  if (s) {
    pthread_mutex_lock(&c->ev_mu);
    if (!l->code || (l->code == XRT_ABORTED && s != XRT_ABORTED)) {
      l->code = s;
      xrt__msgf(l->message, "%s", msg);
    }
    pthread_mutex_unlock(&c->ev_mu);
  }
  if (atomic_fetch_sub(&l->pending, 1) != 1) return;
  xrt__event_complete(l->done, l->code, l->message);
  xrt__event_unref(l->done);
  xrt__free(&c->allocator, l);
}

static void xrt__task_run(xrt__device *d, xrt__task *t) {
  xrt__client *c = d->client;
  char msg[XRT__MSG_CAP];
  msg[0] = 0;
  if (t->kind == XRT__T_CALLBACKS) {
    xrt__event_run_callbacks(t->done);
  } else if (t->kind == XRT__T_EXEC) {
    xrt_status s = xrt__exec_run(d, t, msg);
    xrt__event_complete(t->done, s, msg);
    if (t->launch) xrt__launch_finish(c, t->launch, s, msg);
  } else {
    xrt_status s = xrt__transfer_run(d, t, msg);
    xrt__event_complete(t->done, s, msg);
  }
  xrt__task_free(t, c);
}

/* ---- validation ---- */

/* Checks the executable, device and outputs of a single-device call. */
static xrt_status xrt__exec_check(const xrt__executable *e,
                                  const xrt__device *d,
                                  xrt_buffer **outputs, int num_outputs,
                                  int num_args) {
  XRT__CHECK_ARG(e, "invalid or released executable");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == e->client, "device belongs to another client");
  XRT__CHECK_ARG(outputs || num_outputs == 0, "outputs is NULL");
  if (num_outputs != e->num_outputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s returns %d result(s), room "
                     "for %d was given", xrt__exe_name(e), e->num_outputs,
                     num_outputs);
  if (num_args != e->num_inputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s takes %d argument(s), got %d",
                     xrt__exe_name(e), e->num_inputs, num_args);
  if (num_args > XRT__MAX_IO || num_outputs > XRT__MAX_IO)
    return xrt__fail(XRT_UNIMPLEMENTED, "more than %d arguments or results",
                     XRT__MAX_IO);
  return XRT_OK;
}

/* Checks one argument list and takes a reference to each buffer in bufs
 * (list < 0: a single-device call, else its index for messages). */
static xrt_status xrt__args_acquire(xrt__executable *e, int device,
                                    xrt_buffer *const *args, int num_args,
                                    int list, xrt__buffer **bufs) {
  if (num_args && !args) {
    if (list < 0) return xrt__fail(XRT_INVALID_ARGUMENT, "args is NULL");
    return xrt__fail(XRT_INVALID_ARGUMENT, "argument list %d is NULL", list);
  }
  int i = 0;
  const char *why = NULL;
  for (; i < num_args && !why; i++) {
    xrt__buffer *b = bufs[i] = xrt__buffer_acquire(args[i]);
    if (!b || b->client != e->client) why = "not live";
    else if (b->device != device) why = "device";
    else if (!xrt__shape_equal(&b->shape, &e->inputs[i])) why = "shape";
  }
  if (!why) return XRT_OK;
  xrt__buffer *b = bufs[--i];
  char where[64], have[128], want[128];
  if (list < 0) snprintf(where, sizeof where, "argument %d", i);
  else snprintf(where, sizeof where, "argument list %d, argument %d", list, i);
  xrt_status s;
  if (why[0] == 'n') {
    s = xrt__fail(XRT_INVALID_ARGUMENT, "%s is not a live buffer of this "
                  "executable's client", where);
  } else if (why[0] == 'd') {
    s = xrt__fail(XRT_INVALID_ARGUMENT, "%s lives on device %d, not on "
                  "device %d", where, b->device, device);
  } else {
    xrt_shape_format(&b->shape, have, sizeof have);
    xrt_shape_format(&e->inputs[i], want, sizeof want);
    s = xrt__fail(XRT_INVALID_ARGUMENT, "%s is %s, expected %s", where, have,
                  want);
  }
  for (int k = 0; k <= i; k++) xrt__buffer_unref(bufs[k]);
  return s;
}

static void xrt__bufs_unref(xrt__buffer **bufs, int n) {
  for (int i = 0; i < n; i++) xrt__buffer_unref(bufs[i]);
}

/* A fresh launch id of client c for a launch of one participant.  Ids come
 * from the client's counter in blocks kept per thread, so that a dispatch
 * costs no atomic add; the block is keyed by the client's handle, which is
 * never reused. */
static uint64_t xrt__own_launch_id(xrt__client *c) {
  enum { BLOCK = 256 };
  static XRT__THREAD_LOCAL struct {
    uintptr_t client;
    uint64_t next, end;
  } ids;
  if (ids.client != c->handle || ids.next == ids.end) {
    ids.client = c->handle;
    ids.next = atomic_fetch_add_explicit(&c->next_launch_id, BLOCK,
                                         memory_order_relaxed);
    ids.end = ids.next + BLOCK;
  }
  return ids.next++;
}

/* The launch position of a single-device execution: its own 1x1 launch,
 * or a participant of an MPMD launch given by options. */
static xrt_status xrt__exec_position(xrt__executable *e, xrt__device *d,
                                     const xrt_execute_options *o,
                                     xrt__pos *pos) {
  int32_t R = e->num_replicas, P = e->num_partitions;
  xrt__client *c = e->client;
  if (!o || !o->launch_id) {
    if (R * P != 1)
      return xrt__fail(XRT_INVALID_ARGUMENT, "@%s was compiled for %d "
                       "replica(s) x %d partition(s): run it with "
                       "xrt_execute_multi, or give options.launch_id, "
                       "replica and partition", xrt__exe_name(e), (int)R,
                       (int)P);
    if (e->assignment[0] < 0) return xrt__mp_not_here(e, 0);
    pos->launch_id = xrt__own_launch_id(c);
    pos->replica = pos->partition = 0;
    return XRT_OK;
  }
  if (o->replica < 0 || o->replica >= R || o->partition < 0 ||
      o->partition >= P)
    return xrt__fail(XRT_INVALID_ARGUMENT, "options: replica %d, partition "
                     "%d is outside the launch of @%s (%d replica(s) x %d "
                     "partition(s))", o->replica, o->partition,
                     xrt__exe_name(e), (int)R, (int)P);
  int logical = o->replica * P + o->partition;
  if (e->assignment[logical] < 0) return xrt__mp_not_here(e, logical);
  xrt__device *want = o->devices ? xrt__device_get(o->devices[logical])
                                 : &c->devices[e->assignment[logical]];
  if (!want || want->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "options.devices[%d] is not a "
                     "device of this client", logical);
  if (want != d)
    return xrt__fail(XRT_INVALID_ARGUMENT, "replica %d, partition %d of the "
                     "launch runs on device %d, not on device %d", o->replica,
                     o->partition, want->index, d->index);
  pos->launch_id = o->launch_id;
  pos->replica = o->replica;
  pos->partition = o->partition;
  return XRT_OK;
}

/* A participant task over validated, referenced args (it takes its own
 * references), with new outputs whose ready event is the task's. */
static xrt_status xrt__exec_task(xrt__executable *e, xrt__device *d,
                                 const xrt__pos *pos, xrt__buffer **args,
                                 xrt__launch *launch, xrt__task **out) {
  xrt__client *c = e->client;
  int nin = e->num_inputs, nout = e->num_outputs, n = nin + nout;
  xrt__task *t;
  xrt_status s = xrt__task_start(
      c, XRT__T_EXEC, (size_t)n * (sizeof(xrt__buffer *) + sizeof(void *)),
      d->index, &t);
  if (s) return s;
  t->bufs = (xrt__buffer **)(void *)(t + 1);
  t->mems = (void **)(void *)(t->bufs + n);
  t->exe = e;
  atomic_fetch_add(&e->refs, 1);
  t->launch_id = pos->launch_id;
  t->replica = pos->replica;
  t->partition = pos->partition;
  t->num_args = nin;
  for (int i = 0; i < nin; i++) {
    t->bufs[i] = args[i];
    atomic_fetch_add(&args[i]->refs, 1);
    t->mems[i] = args[i]->mem;
  }
  for (int i = 0; i < nout && !s; i++) {
    xrt__buffer *b;
    s = xrt__buffer_new(c, d->index, &e->outputs[i],
                        xrt_shape_bytes(&e->outputs[i]), t->done, &b);
    if (s) break;
    atomic_fetch_add(&b->refs, 1); /* the task's, beside the handle's */
    t->bufs[nin + i] = b;
    t->mems[nin + i] = b->mem;
    t->num_outs = i + 1;
  }
  if (s) {
    for (int i = 0; i < t->num_outs; i++)
      xrt__hkill(t->bufs[nin + i]->handle);
    for (int i = 0; i < t->num_outs; i++)
      xrt__buffer_unref(t->bufs[nin + i]); /* the handle's reference */
    xrt__task_free(t, c);
    return s;
  }
  t->launch = launch;
  *out = t;
  return XRT_OK;
}

/* Gives the caller its outputs (the handles' references stay with them). */
static void xrt__exec_publish(const xrt__task *t, xrt_buffer **outputs) {
  for (int i = 0; i < t->num_outs; i++)
    outputs[i] = (xrt_buffer *)t->bufs[t->num_args + i]->handle;
}

/* Frees a task that was never enqueued, with its outputs. */
static void xrt__exec_task_cancel(xrt__task *t, xrt__client *c) {
  for (int i = 0; i < t->num_outs; i++) {
    xrt__buffer *b = t->bufs[t->num_args + i];
    xrt__hkill(b->handle);
    xrt__buffer_unref(b);
  }
  xrt__task_free(t, c);
}

/* ---- single-device execution ---- */

/* The synchronous fast path: inputs ready, device held by the caller. */
static xrt_status xrt__execute_inline(xrt__executable *e, xrt__device *d,
                                      const xrt__pos *pos, xrt__buffer **args,
                                      xrt_buffer **outputs) {
  void *in_mem[XRT__MAX_IO], *out_mem[XRT__MAX_IO];
  xrt__buffer *outs[XRT__MAX_IO];
  xrt__client *c = e->client;
  int nin = e->num_inputs, nout = e->num_outputs;
  for (int i = 0; i < nout; i++) outs[i] = NULL;
  for (int i = 0; i < nin; i++) in_mem[i] = args[i]->mem;
  xrt_status s = XRT_OK;
  for (int i = 0; !s && i < nout; i++) {
    s = xrt__buffer_new(c, d->index, &e->outputs[i],
                        xrt_shape_bytes(&e->outputs[i]), NULL, &outs[i]);
    if (!s) out_mem[i] = outs[i]->mem;
  }
  if (!s) {
    char msg[XRT__MSG_CAP];
    s = xrt__plugin_execute(e, d->index, pos, in_mem, nin, out_mem, nout,
                            NULL, msg);
    if (s) xrt__fail(s, "%s", msg);
  }
  for (int i = 0; i < nout; i++) {
    if (s) xrt__buffer_discard(outs[i]);
    else outputs[i] = (xrt_buffer *)outs[i]->handle;
  }
  return s;
}

/* Enqueues a single-device execution; outputs get the new buffers. */
static xrt_status xrt__execute_enqueue(xrt__executable *e, xrt__device *d,
                                       const xrt__pos *pos,
                                       xrt__buffer **args,
                                       xrt_buffer **outputs,
                                       xrt__event **done) {
  xrt__task *t;
  xrt_status s = xrt__exec_task(e, d, pos, args, NULL, &t);
  if (s) return s;
  xrt__exec_publish(t, outputs);
  *done = t->done;
  xrt__event_ref(t->done);
  xrt__enqueue(d, t);
  return XRT_OK;
}

/* The first failed argument's error ("argument N: ..."); XRT_UNAVAILABLE
 * if one is still pending; XRT_OK if all are ready. */
static xrt_status xrt__args_state(xrt__buffer **args, int n) {
  xrt_status pending = XRT_OK;
  for (int i = 0; i < n; i++) {
    xrt_status s = xrt__buffer_state(args[i]);
    if (s == XRT_UNAVAILABLE) pending = s;
    else if (s)
      return xrt__fail(s, "argument %d: %s", i, args[i]->ready->message);
  }
  return pending;
}

/* The checks and references every one-device execute starts with: on
 * success the caller holds *e and the argument buffers. */
static xrt_status xrt__exec_begin(xrt_executable *executable,
                                  xrt_device *device, xrt_buffer *const *args,
                                  int num_args, xrt_buffer **outputs,
                                  int num_outputs,
                                  const xrt_execute_options *options,
                                  xrt__executable **e_out, xrt__device **d_out,
                                  xrt__pos *pos, xrt__buffer **bufs) {
  xrt__executable *e = xrt__executable_acquire(executable);
  xrt__device *d = xrt__device_get(device);
  xrt_status s = xrt__exec_check(e, d, outputs, num_outputs, num_args);
  if (!s) s = xrt__exec_position(e, d, options, pos);
  if (!s) s = xrt__args_acquire(e, d->index, args, num_args, -1, bufs);
  if (s) {
    if (e) xrt__executable_unref(e);
    return s;
  }
  *e_out = e;
  *d_out = d;
  return XRT_OK;
}

xrt_status xrt_execute(xrt_executable *executable, xrt_device *device,
                       xrt_buffer *const *args, int num_args,
                       xrt_buffer **outputs, int num_outputs,
                       const xrt_execute_options *options) {
  xrt__executable *e;
  xrt__device *d;
  xrt__buffer *bufs[XRT__MAX_IO];
  xrt__pos pos;
  xrt_status s = xrt__exec_begin(executable, device, args, num_args, outputs,
                                 num_outputs, options, &e, &d, &pos, bufs);
  if (s) return s;
  s = xrt__args_state(bufs, num_args);
  if (!s && xrt__device_hold(d)) {
    s = xrt__execute_inline(e, d, &pos, bufs, outputs);
    xrt__device_unhold(d);
  } else if (!s || s == XRT_UNAVAILABLE) {
    xrt__event *done = NULL;
    s = xrt__execute_enqueue(e, d, &pos, bufs, outputs, &done);
    if (!s && (s = xrt__event_wait(done))) {
      xrt__fail(s, "%s", done->message);
      for (int i = 0; i < num_outputs; i++) {
        xrt_buffer_release(outputs[i]);
        outputs[i] = NULL;
      }
    }
    xrt__event_unref(done);
  }
  xrt__bufs_unref(bufs, num_args);
  xrt__executable_unref(e);
  return s;
}

xrt_status xrt_execute_async(xrt_executable *executable, xrt_device *device,
                             xrt_buffer *const *args, int num_args,
                             xrt_buffer **outputs, int num_outputs,
                             const xrt_execute_options *options,
                             xrt_event **out_done) {
  if (out_done) *out_done = NULL;
  xrt__executable *e;
  xrt__device *d;
  xrt__buffer *bufs[XRT__MAX_IO];
  xrt__pos pos;
  xrt_status s = xrt__exec_begin(executable, device, args, num_args, outputs,
                                 num_outputs, options, &e, &d, &pos, bufs);
  if (s) return s;
  xrt__task *t;
  s = xrt__exec_task(e, d, &pos, bufs, NULL, &t);
  if (!s && out_done && (s = xrt__event_publish(t->done, out_done)))
    xrt__exec_task_cancel(t, e->client);
  if (!s) {
    xrt__exec_publish(t, outputs);
    xrt__enqueue(d, t);
  }
  xrt__bufs_unref(bufs, num_args);
  xrt__executable_unref(e);
  return s;
}

/* ---- multi-device execution ---- */

/* The devices of a launch by logical id, checked: of this client and
 * distinct (two participants on one in-order queue would wait on each
 * other forever). */
static xrt_status xrt__multi_devices(xrt__executable *e, int n,
                                      const xrt_execute_options *o,
                                      xrt__device **devs) {
  xrt__client *c = e->client;
  for (int i = 0; i < n; i++) {
    devs[i] = o && o->devices ? xrt__device_get(o->devices[i])
                              : &c->devices[e->assignment[i]];
    if (!devs[i] || devs[i]->client != c)
      return xrt__fail(XRT_INVALID_ARGUMENT, "options.devices[%d] is not a "
                       "device of this client", i);
    for (int j = 0; j < i; j++)
      if (devs[j] == devs[i])
        return xrt__fail(XRT_INVALID_ARGUMENT, "options.devices[%d] and "
                         "options.devices[%d] are both device %d", j, i,
                         devs[i]->index);
  }
  return XRT_OK;
}

static xrt_status xrt__multi_check(xrt__executable *e, int num_lists,
                                   int num_args, int num_outputs,
                                   const void *argument_lists,
                                   xrt_buffer **const *output_lists) {
  XRT__CHECK_ARG(e, "invalid or released executable");
  int n = e->num_replicas * e->num_partitions;
  if (num_lists > e->client->num_devices)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_lists is %d, but the client "
                     "has only %d device(s)", num_lists,
                     e->client->num_devices);
  if (num_lists != n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_lists is %d, @%s runs on %d "
                     "replica(s) x %d partition(s) = %d device(s)", num_lists,
                     xrt__exe_name(e), (int)e->num_replicas,
                     (int)e->num_partitions, n);
  if (num_args != e->num_inputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s takes %d argument(s), got %d",
                     xrt__exe_name(e), e->num_inputs, num_args);
  if (num_outputs != e->num_outputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s returns %d result(s), room "
                     "for %d was given", xrt__exe_name(e), e->num_outputs,
                     num_outputs);
  XRT__CHECK_ARG(argument_lists || num_args == 0, "argument_lists is NULL");
  XRT__CHECK_ARG(output_lists || num_outputs == 0, "output_lists is NULL");
  for (int i = 0; i < n && num_outputs; i++)
    if (!output_lists[i])
      return xrt__fail(XRT_INVALID_ARGUMENT, "output list %d is NULL", i);
  return XRT_OK;
}

/* Everything a multi-device launch allocates before it is enqueued. */
typedef struct xrt__multi {
  int n;
  xrt__device *devs[1024];
  xrt__buffer **bufs;  /* n * num_inputs argument references */
  int num_acquired;    /* lists whose arguments bufs holds */
  xrt__task **tasks;
  xrt__launch *launch;
} xrt__multi;

static void xrt__multi_free(xrt__executable *e, xrt__multi *m, bool enqueued) {
  xrt__client *c = e->client;
  for (int i = 0; i < m->num_acquired; i++)
    xrt__bufs_unref(m->bufs + (size_t)i * (size_t)e->num_inputs,
                    e->num_inputs);
  for (int i = 0; !enqueued && m->tasks && i < m->n; i++)
    if (m->tasks[i]) xrt__exec_task_cancel(m->tasks[i], c);
  if (!enqueued && m->launch) {
    xrt__event_unref(m->launch->done);
    xrt__free(&c->allocator, m->launch);
  }
  xrt__free(&c->allocator, m->bufs);
  xrt__free(&c->allocator, m->tasks);
}

/* Validates every argument list, then makes the launch and its tasks.
 * Participant k runs logical id lids[k] (lids NULL: k) of the launch id
 * *fixed_id, or (fixed_id NULL) of o->launch_id or a new id. */
static xrt_status xrt__multi_fill(xrt__executable *e, xrt__multi *m,
                                  const int *lids,
                                  xrt_buffer *const *const *lists,
                                  const xrt_execute_options *o,
                                  const uint64_t *fixed_id) {
  xrt__client *c = e->client;
  int nin = e->num_inputs;
  m->bufs = (xrt__buffer **)xrt__calloc(&c->allocator,
                                        (size_t)m->n * (size_t)nin + 1,
                                        sizeof(xrt__buffer *));
  m->tasks = (xrt__task **)xrt__calloc(&c->allocator, (size_t)m->n,
                                       sizeof(xrt__task *));
  m->launch = (xrt__launch *)xrt__calloc(&c->allocator, 1, sizeof(xrt__launch));
  if (!m->bufs || !m->tasks || !m->launch ||
      !(m->launch->done = xrt__event_new(c, m->devs[0]->index)))
    return xrt__nomem("a multi-device launch");
  atomic_init(&m->launch->pending, m->n);
  for (int k = 0; k < m->n; k++) {
    int lid = lids ? lids[k] : k;
    xrt_status s = xrt__args_acquire(e, m->devs[k]->index,
                                     nin ? lists[lid] : NULL, nin, lid,
                                     m->bufs + (size_t)k * (size_t)nin);
    if (s) return s;
    m->num_acquired = k + 1;
  }
  uint64_t id = fixed_id           ? *fixed_id
                : o && o->launch_id ? o->launch_id
                                    : atomic_fetch_add_explicit(
                                          &c->next_launch_id, 1,
                                          memory_order_relaxed);
  for (int k = 0; k < m->n; k++) {
    int lid = lids ? lids[k] : k;
    xrt__pos pos = {id, (int32_t)(lid / e->num_partitions),
                    (int32_t)(lid % e->num_partitions)};
    xrt_status s = xrt__exec_task(e, m->devs[k], &pos,
                                  m->bufs + (size_t)k * (size_t)nin,
                                  m->launch, &m->tasks[k]);
    if (s) return s;
  }
  return XRT_OK;
}

static xrt_status xrt__multi_prepare(xrt__executable *e, xrt__multi *m,
                                     xrt_buffer *const *const *lists,
                                     const xrt_execute_options *o) {
  return xrt__multi_fill(e, m, NULL, lists, o, NULL);
}

/* Holds every device of an inline-able launch whose inputs are all
 * complete (so no participant waits), or none. */
static bool xrt__multi_hold(const xrt__executable *e, const xrt__multi *m) {
  if (!e->inline_ok) return false;
  for (size_t i = 0; i < (size_t)m->n * (size_t)e->num_inputs; i++)
    if (xrt__buffer_state(m->bufs[i]) == XRT_UNAVAILABLE) return false;
  for (int i = 0; i < m->n; i++)
    if (!xrt__device_hold(m->devs[i])) {
      while (i-- > 0) xrt__device_unhold(m->devs[i]);
      return false;
    }
  return true;
}

/* Publishes a prepared launch (its done event, each participant's
 * outputs: outs[lids[k]], lids NULL meaning k, outs NULL meaning none)
 * and starts it: inline when cheap with ready inputs and idle devices,
 * else on every device queue at once under the client's launch lock. */
static xrt_status xrt__multi_start(xrt__executable *e, xrt__multi *m,
                                   const int *lids, xrt_buffer **const *outs,
                                   xrt_event **out_done) {
  xrt__client *c = e->client;
  if (out_done) {
    xrt_status s = xrt__event_publish(m->launch->done, out_done);
    if (s) return s;
  }
  for (int k = 0; k < m->n; k++)
    xrt__exec_publish(m->tasks[k], outs ? outs[lids ? lids[k] : k] : NULL);
  if (xrt__multi_hold(e, m)) { /* cheap, inputs ready, devices idle */
    for (int k = 0; k < m->n; k++) xrt__task_run(m->devs[k], m->tasks[k]);
    for (int k = 0; k < m->n; k++) xrt__device_unhold(m->devs[k]);
  } else {
    pthread_mutex_lock(&c->launch_mu);
    for (int k = 0; k < m->n; k++) xrt__enqueue(m->devs[k], m->tasks[k]);
    pthread_mutex_unlock(&c->launch_mu);
  }
  return XRT_OK;
}

xrt_status xrt_execute_multi(xrt_executable *executable,
                             xrt_buffer *const *const *argument_lists,
                             int num_lists, int num_args,
                             xrt_buffer **const *output_lists,
                             int num_outputs,
                             const xrt_execute_options *options,
                             xrt_event **out_done) {
  if (out_done) *out_done = NULL;
  xrt__executable *e = xrt__executable_acquire(executable);
  if (e && e->client->mp) /* section 13a */
    return xrt__mp_execute_multi(e, argument_lists, num_lists, num_args,
                                 output_lists, num_outputs, options, out_done);
  xrt_status s = xrt__multi_check(e, num_lists, num_args, num_outputs,
                                  argument_lists, output_lists);
  if (s) {
    if (e) xrt__executable_unref(e);
    return s;
  }
  xrt__multi m;
  memset(&m, 0, sizeof m);
  m.n = num_lists;
  s = xrt__multi_devices(e, m.n, options, m.devs);
  if (!s) s = xrt__multi_prepare(e, &m, argument_lists, options);
  if (!s) s = xrt__multi_start(e, &m, NULL, output_lists, out_done);
  xrt__multi_free(e, &m, !s);
  xrt__executable_unref(e);
  return s;
}

/* ======================================================================
 * 13a. Multi-process clients (issue #11)
 *
 * Multi-process clients: the installed transport (xrt_transport_install),
 * a client's place in the system and its global device set (this
 * process's devices are its own xrt__device records; the others' are
 * records of their own handle kind, XRT__H_RDEVICE, which every call that
 * would touch a device refuses), executables whose launch spans processes
 * (device_assignment in global ids; logical ids of other processes hold
 * -1 in e->assignment), and their launches: each process enqueues its own
 * participants, with a launch id counted alike in every process.
 *
 * Contents: errors for extensions; the transport; joining; global
 * devices; launch shape and compile arguments; execution; the xrt_mpi_*
 * stubs of a build without MPI.
 * ==================================================================== */

/* ---- errors for code outside the core ---- */

xrt_status xrt_report_error(xrt_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (fmt) vsnprintf(xrt__error.message, sizeof xrt__error.message, fmt, ap);
  else xrt__error.message[0] = 0;
  va_end(ap);
  xrt__error.code = code;
  if (code) xrt__log_failure(code, xrt__error.message);
  return code;
}

/* ---- the transport ---- */

static pthread_mutex_t xrt__tp_mu = PTHREAD_MUTEX_INITIALIZER;
static xrt_transport xrt__tp;
static bool xrt__tp_on;

xrt_status xrt_transport_install(const xrt_transport *t) {
  if (t && t->struct_size < sizeof *t)
    return xrt__fail(XRT_INVALID_ARGUMENT, "transport: struct_size %zu is "
                     "smaller than xrt's %zu", t->struct_size, sizeof *t);
  if (t && (!t->allgather || !t->exchange))
    return xrt__fail(XRT_INVALID_ARGUMENT, "transport: allgather or exchange "
                     "is NULL");
  if (t && (t->topology.process_count < 1 || t->topology.process_index < 0 ||
            t->topology.process_index >= t->topology.process_count))
    return xrt__fail(XRT_INVALID_ARGUMENT, "transport: process_index %d is "
                     "outside 0..%d", t->topology.process_index,
                     t->topology.process_count - 1);
  pthread_mutex_lock(&xrt__tp_mu);
  if (t) xrt__tp = *t;
  xrt__tp_on = t != NULL;
  pthread_mutex_unlock(&xrt__tp_mu);
  return XRT_OK;
}

/* ---- joining ---- */

/* Another process's device. */
typedef struct xrt__rdev {
  uintptr_t handle;
  xrt__client *client;
  int gid, process;
} xrt__rdev;

struct xrt__mp {
  xrt_transport tp;
  int me, nproc;
  int ndev;          /* devices of every process */
  int *first;        /* nproc + 1: each process's first global id */
  xrt__rdev *rdevs;  /* ndev (this process's entries unused) */
  _Atomic uint64_t next_launch;
  _Atomic uint64_t next_coll; /* the core's collectives, counted alike */
};

/* Tags on the transport, three disjoint spaces: the plugin's (bits 60 and
 * 61 clear), the core's own collectives (bit 61, then the client's join
 * number from bit 40 and a counter that every process advances alike) and
 * the users' (bit 60, then their tag, below XRT_USER_TAG_LIMIT).  Launch
 * ids carry the join number too, so that two joined clients alive at once
 * never share a launch id or a tag (clients join in the same order in
 * every process). */
#define XRT__TAG_PLUGIN_MASK (~((uint64_t)3 << 60))
#define XRT__TAG_CORE ((uint64_t)1 << 61)
#define XRT__TAG_USER ((uint64_t)1 << 60)

/* Clients of this process that joined a system so far. */
static _Atomic uint64_t xrt__mp_joins;

/* Launch ids of multi-process launches: their own range, counted alike in
 * every process. */
#define XRT__MP_LAUNCH_BIT ((uint64_t)1 << 62)

static xrt_status xrt__mp_host_exchange(void *ctx, uint64_t tag,
                                        const xrt_transport_msg *sends,
                                        int nsend,
                                        const xrt_transport_msg *recvs,
                                        int nrecv, xrt_plugin_error *err) {
  xrt__client *c = (xrt__client *)ctx;
  if (!c || !c->mp) {
    if (err) snprintf(err->message, sizeof err->message, "exchange: the "
                      "client is of one process");
    return XRT_FAILED_PRECONDITION;
  }
  char tmp[1];
  tag &= XRT__TAG_PLUGIN_MASK;
  return c->mp->tp.exchange(c->mp->tp.self, tag, sends, nsend, recvs, nrecv,
                            err ? err->message : tmp,
                            err ? sizeof err->message : sizeof tmp);
}

/* Whether the client joins the installed transport's system (options
 * leave process_count at -1), and then its topology and the plugin's
 * exchange service.  Before the plugin's client exists. */
static xrt_status xrt__mp_join(xrt__client *c, const xrt_client_options *o) {
  pthread_mutex_lock(&xrt__tp_mu);
  bool on = xrt__tp_on && o->topology.process_count == -1;
  xrt_transport tp = xrt__tp;
  pthread_mutex_unlock(&xrt__tp_mu);
  if (!on) return XRT_OK;
  /* options.cache_store is shared: every process reads it, process 0
   * alone writes it (section 12b). */
  struct xrt__mp *mp =
      (struct xrt__mp *)xrt__calloc(&c->allocator, 1, sizeof *mp);
  if (!mp) return xrt__nomem("the client's process table");
  mp->tp = tp;
  mp->me = tp.topology.process_index;
  mp->nproc = tp.topology.process_count;
  uint64_t join = atomic_fetch_add(&xrt__mp_joins, 1) & 0x3fff;
  atomic_init(&mp->next_launch, XRT__MP_LAUNCH_BIT | join << 40 | 1);
  atomic_init(&mp->next_coll, join << 40 | 1);
  c->mp = mp;
  const xrt_topology *in = &o->topology;
  xrt_topology *t = &c->topology;
  t->process_index = mp->me;
  t->process_count = mp->nproc;
  if (in->host_index < 0) t->host_index = tp.topology.host_index;
  if (in->local_rank < 0) t->local_rank = tp.topology.local_rank;
  if (in->local_world_size < 0)
    t->local_world_size = tp.topology.local_world_size;
  xrt_plugin_host_api *h = (xrt_plugin_host_api *)xrt__host_api_for(c, &c->allocator);
  if (!h) return xrt__nomem("the plugin's host services");
  h->exchange = xrt__mp_host_exchange;
  h->process_index = mp->me;
  h->process_count = mp->nproc;
  return XRT_OK;
}

/* Every process's device count (collective), then the global table. */
static xrt_status xrt__mp_devices(xrt__client *c) {
  struct xrt__mp *mp = c->mp;
  if (!mp) return XRT_OK;
  int *counts = (int *)xrt__calloc(&c->allocator, (size_t)mp->nproc,
                                   sizeof(int));
  mp->first = (int *)xrt__calloc(&c->allocator, (size_t)mp->nproc + 1,
                                 sizeof(int));
  if (!counts || !mp->first) {
    xrt__free(&c->allocator, counts);
    return xrt__nomem("the global device table");
  }
  char msg[1024] = "";
  xrt_status s = mp->tp.allgather(mp->tp.self, &c->num_devices, counts,
                                  sizeof(int), msg, sizeof msg);
  if (s) {
    xrt__free(&c->allocator, counts);
    return xrt__fail(s, "client creation: gathering every process's device "
                     "count failed: %s", msg);
  }
  for (int p = 0; p < mp->nproc; p++) {
    if (counts[p] < 1 || counts[p] > 65536) {
      xrt__free(&c->allocator, counts);
      return xrt__fail(XRT_INTERNAL, "client creation: process %d reports %d "
                       "devices", p, counts[p]);
    }
    mp->first[p + 1] = mp->first[p] + counts[p];
  }
  xrt__free(&c->allocator, counts);
  mp->ndev = mp->first[mp->nproc];
  mp->rdevs = (xrt__rdev *)xrt__calloc(&c->allocator, (size_t)mp->ndev,
                                       sizeof(xrt__rdev));
  if (!mp->rdevs) return xrt__nomem("the global device table");
  for (int p = 0; p < mp->nproc; p++)
    for (int g = mp->first[p]; g < mp->first[p + 1]; g++) {
      xrt__rdev *r = &mp->rdevs[g];
      r->client = c;
      r->gid = g;
      r->process = p;
      if (p == mp->me) continue;
      r->handle = xrt__hnew(r, XRT__H_RDEVICE);
      if (!r->handle) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
    }
  return XRT_OK;
}

static void xrt__mp_free(xrt__client *c) {
  struct xrt__mp *mp = c->mp;
  if (!mp) return;
  for (int g = 0; mp->rdevs && g < mp->ndev; g++)
    if (mp->rdevs[g].handle) xrt__hfree_handle(mp->rdevs[g].handle);
  xrt__free(&c->allocator, mp->rdevs);
  xrt__free(&c->allocator, mp->first);
  xrt__free(&c->allocator, mp);
  c->mp = NULL;
}

/* ---- section 12b's view of the process table ----
 *
 * Here, after struct xrt__mp; declared at the top of 12b.  A persistent
 * store is shared by the processes of a job, so what the key and a stored
 * executable say about devices must read alike in every process. */

/* Devices of every process (the range of global ids). */
static int xrt__cache_ndev(const xrt__client *c) {
  return c->mp ? c->mp->ndev : c->num_devices;
}

/* The topology part of the key: the process count and every process's
 * device count (not this process's index, nor local_world_size, which
 * differs between hosts of unequal process counts). */
static void xrt__cache_mp_digest(const xrt__client *c, XXH3_state_t *st) {
  const struct xrt__mp *mp = c->mp;
  int32_t words[3] = {0x6d70 /* "mp" */, mp->nproc, mp->ndev};
  XXH3_128bits_update(st, words, sizeof words);
  XXH3_128bits_update(st, mp->first, sizeof *mp->first * (size_t)mp->nproc);
}

/* From the global ids at a[2n..3n): each logical id's process (a[n..2n))
 * and local device here, -1 on another process (a[0..n)), as
 * xrt__mp_executable_launch lays them out.  Ids are below ndev. */
static void xrt__cache_mp_place(const xrt__client *c, int32_t *a,
                                int64_t n) {
  const struct xrt__mp *mp = c->mp;
  for (int64_t i = 0; i < n; i++) {
    int g = a[2 * n + i];
    int p = mp->rdevs[g].process;
    a[n + i] = p;
    a[i] = p == mp->me ? g - mp->first[mp->me] : -1;
  }
}

/* ---- global devices ---- */

int xrt_client_global_device_count(const xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "invalid client");
    return -1;
  }
  return c->mp ? c->mp->ndev : c->num_devices;
}

xrt_device *xrt_client_global_device(xrt_client *client, int gid) {
  xrt__client *c = xrt__client_get(client);
  if (!c) {
    xrt__fail(XRT_INVALID_ARGUMENT, "invalid client");
    return NULL;
  }
  int n = c->mp ? c->mp->ndev : c->num_devices;
  if (gid < 0 || gid >= n) {
    xrt__fail(XRT_OUT_OF_RANGE, "global device id %d is outside 0..%d", gid,
              n - 1);
    return NULL;
  }
  if (!c->mp) return (xrt_device *)c->devices[gid].handle;
  const xrt__rdev *r = &c->mp->rdevs[gid];
  if (r->process != c->mp->me) return (xrt_device *)r->handle;
  return (xrt_device *)c->devices[gid - c->mp->first[c->mp->me]].handle;
}

static xrt__rdev *xrt__rdev_get(const xrt_device *d) {
  return (xrt__rdev *)xrt__hget(d, XRT__H_RDEVICE);
}

int xrt_device_global_id(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  if (d)
    return d->client->mp ? d->client->mp->first[d->client->mp->me] + d->index
                         : d->index;
  xrt__rdev *r = xrt__rdev_get(device);
  return r ? r->gid : -1;
}

int xrt_device_process_index(const xrt_device *device) {
  xrt__device *d = xrt__device_get(device);
  if (d) return d->client->topology.process_index;
  xrt__rdev *r = xrt__rdev_get(device);
  return r ? r->process : -1;
}

int xrt_device_is_addressable(const xrt_device *device) {
  if (xrt__device_get(device)) return 1;
  return xrt__rdev_get(device) ? 0 : -1;
}

/* ---- host exchanges: the core's collectives and the users' ---- */

/* The tag of the core's next collective on c (multi-process).  Collective
 * calls are issued in the same order in every process, so the counters
 * agree. */
static uint64_t xrt__mp_next_tag(xrt__client *c) {
  return XRT__TAG_CORE |
         atomic_fetch_add_explicit(&c->mp->next_coll, 1, memory_order_relaxed);
}

/* The transport's exchange, its failure reported as what's. */
static xrt_status xrt__mp_exchange(xrt__client *c, uint64_t tag,
                                   const xrt_transport_msg *sends, int nsend,
                                   const xrt_transport_msg *recvs, int nrecv,
                                   const char *what) {
  char msg[512] = "";
  xrt_status s = c->mp->tp.exchange(c->mp->tp.self, tag, sends, nsend, recvs,
                                    nrecv, msg, sizeof msg);
  return s ? xrt__fail(s, "%s: %s", what, msg[0] ? msg : xrt_strerror(s))
           : XRT_OK;
}

/* Every process's bytes at in into out (process order), through tagged
 * exchanges: unlike the transport's allgather, several may run at once
 * from different threads.  Any client (one process: a copy). */
static xrt_status xrt__mp_allgather(xrt__client *c, uint64_t tag,
                                    const void *in, void *out, size_t bytes,
                                    const char *what) {
  struct xrt__mp *mp = c->mp;
  int me = mp ? mp->me : 0, np = mp ? mp->nproc : 1;
  if (bytes) memmove((char *)out + (size_t)me * bytes, in, bytes);
  if (np == 1) return XRT_OK;
  /* The message lists of up to 9 processes on the stack: the votes of
   * section 13c must go out even when host memory is short. */
  xrt_transport_msg stack[16] = {{0}};
  xrt_transport_msg *m = np <= 9 ? stack
                                 : (xrt_transport_msg *)xrt__calloc(
                                       &c->allocator, 2 * (size_t)(np - 1),
                                       sizeof *m);
  if (!m) return xrt__nomem("an exchange between processes");
  int k = 0;
  for (int p = 0; p < np; p++) {
    if (p == me) continue;
    m[k] = (xrt_transport_msg){p, (char *)out + (size_t)me * bytes, bytes};
    m[np - 1 + k++] = (xrt_transport_msg){p, (char *)out + (size_t)p * bytes,
                                          bytes};
  }
  xrt_status s = xrt__mp_exchange(c, tag, m, np - 1, m + np - 1, np - 1, what);
  if (m != stack) xrt__free(&c->allocator, m);
  return s;
}

xrt_status xrt_client_process_allgather(xrt_client *client, const void *in,
                                        void *out, size_t bytes) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(!bytes || (in && out), "in or out is NULL");
  uint64_t tag = c->mp ? xrt__mp_next_tag(c) : 0;
  return xrt__mp_allgather(c, tag, in, out, bytes,
                           "xrt_client_process_allgather");
}

xrt_status xrt_client_process_exchange(xrt_client *client, uint64_t tag,
                                       const xrt_transport_msg *sends,
                                       int num_sends,
                                       const xrt_transport_msg *recvs,
                                       int num_recvs) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  if (!c->mp)
    return xrt__fail(XRT_FAILED_PRECONDITION, "xrt_client_process_exchange: "
                     "the client is of one process");
  if (tag >= XRT_USER_TAG_LIMIT)
    return xrt__fail(XRT_INVALID_ARGUMENT, "tag %" PRIu64 " is not below "
                     "XRT_USER_TAG_LIMIT", tag);
  XRT__CHECK_ARG(num_sends >= 0 && num_recvs >= 0, "negative message count");
  XRT__CHECK_ARG((!num_sends || sends) && (!num_recvs || recvs),
                 "sends or recvs is NULL");
  const xrt_transport_msg *lists[2] = {sends, recvs};
  int counts[2] = {num_sends, num_recvs};
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < counts[l]; i++) {
      const xrt_transport_msg *m = &lists[l][i];
      if (m->peer < 0 || m->peer >= c->mp->nproc || m->peer == c->mp->me)
        return xrt__fail(XRT_INVALID_ARGUMENT, "%s[%d].peer is %d: another "
                         "process of 0..%d is needed", l ? "recvs" : "sends",
                         i, m->peer, c->mp->nproc - 1);
      if (m->bytes && !m->data)
        return xrt__fail(XRT_INVALID_ARGUMENT, "%s[%d].data is NULL",
                         l ? "recvs" : "sends", i);
    }
  return xrt__mp_exchange(c, XRT__TAG_USER | tag, sends, num_sends, recvs,
                          num_recvs, "xrt_client_process_exchange");
}

/* ---- launch shape and compile arguments ---- */

/* The process of global device g. */
static int xrt__mp_process_of(const struct xrt__mp *mp, int g) {
  return mp->rdevs[g].process;
}

/* e->assignment holds 3n entries: the local device of each logical id (-1
 * on another process), then its process, then its global id. */
static xrt_status xrt__mp_executable_launch(xrt__executable *e,
                                            const xrt_compile_options *o) {
  const xrt_ir_module *m = e->program->module;
  xrt__client *c = e->client;
  struct xrt__mp *mp = c->mp;
  int64_t R = o && o->num_replicas ? o->num_replicas : m->num_replicas;
  int64_t P = o && o->num_partitions ? o->num_partitions : m->num_partitions;
  if (R < 1 || P < 1)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_replicas (%" PRId64 ") and "
                     "num_partitions (%" PRId64 ") must be at least 1", R, P);
  if (R * P > mp->ndev)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%" PRId64 " replica(s) x %" PRId64
                     " partition(s) need %" PRId64 " devices, the %d "
                     "processes have %d", R, P, R * P, mp->nproc, mp->ndev);
  int64_t n = R * P;
  e->num_replicas = (int32_t)R;
  e->num_partitions = (int32_t)P;
  e->assignment = (int32_t *)xrt__calloc(&c->allocator, (size_t)(3 * n),
                                         sizeof(int32_t));
  if (!e->assignment) return xrt__nomem("the device assignment");
  int32_t *proc = e->assignment + n, *gids = e->assignment + 2 * n;
  for (int64_t i = 0; i < n; i++) {
    int g = o && o->device_assignment ? o->device_assignment[i] : (int)i;
    if (g < 0 || g >= mp->ndev)
      return xrt__fail(XRT_INVALID_ARGUMENT, "device_assignment[%" PRId64 "] "
                       "is %d, outside the global ids 0..%d", i, g,
                       mp->ndev - 1);
    for (int64_t j = 0; j < i; j++)
      if (gids[j] == g)
        return xrt__fail(XRT_INVALID_ARGUMENT, "device_assignment[%" PRId64
                         "] and [%" PRId64 "] are both device %d", j, i, g);
    gids[i] = g;
    proc[i] = xrt__mp_process_of(mp, g);
    e->assignment[i] = proc[i] == mp->me ? g - mp->first[mp->me] : -1;
  }
  return XRT_OK;
}

static void xrt__mp_compile_args(const xrt__executable *e,
                                 xrt_plugin_compile_args *a) {
  const struct xrt__mp *mp = e->client->mp;
  if (!mp) return;
  a->participant_process =
      e->assignment + (size_t)e->num_replicas * (size_t)e->num_partitions;
  a->process_index = mp->me;
}

static xrt_device *xrt__mp_device_of(const xrt__executable *e, int logical) {
  size_t n = (size_t)e->num_replicas * (size_t)e->num_partitions;
  const struct xrt__mp *mp = e->client->mp;
  return (xrt_device *)mp->rdevs[e->assignment[2 * n + (size_t)logical]]
      .handle;
}

static xrt_status xrt__mp_not_here(const xrt__executable *e, int logical) {
  size_t n = (size_t)e->num_replicas * (size_t)e->num_partitions;
  return xrt__fail(XRT_INVALID_ARGUMENT, "replica %d, partition %d of @%s "
                   "runs on device %d of process %d: this is process %d",
                   logical / e->num_partitions, logical % e->num_partitions,
                   xrt__exe_name(e), (int)e->assignment[2 * n + (size_t)logical],
                   (int)e->assignment[n + (size_t)logical],
                   e->client->mp->me);
}

/* ---- execution ---- */

static xrt_status xrt__mp_multi_check(xrt__executable *e, int num_lists,
                                      int num_args, int num_outputs,
                                      xrt_buffer *const *const *lists,
                                      xrt_buffer **const *outs,
                                      const xrt_execute_options *o) {
  int n = e->num_replicas * e->num_partitions;
  if (num_lists != n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "num_lists is %d, @%s runs on %d "
                     "replica(s) x %d partition(s) = %d device(s) of all "
                     "processes", num_lists, xrt__exe_name(e),
                     (int)e->num_replicas, (int)e->num_partitions, n);
  if (num_args != e->num_inputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s takes %d argument(s), got %d",
                     xrt__exe_name(e), e->num_inputs, num_args);
  if (num_outputs != e->num_outputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s returns %d result(s), room "
                     "for %d was given", xrt__exe_name(e), e->num_outputs,
                     num_outputs);
  if (o && o->devices)
    return xrt__fail(XRT_INVALID_ARGUMENT, "options.devices: a launch over "
                     "several processes runs on the executable's device "
                     "assignment");
  XRT__CHECK_ARG(lists || num_args == 0, "argument_lists is NULL");
  XRT__CHECK_ARG(outs || num_outputs == 0, "output_lists is NULL");
  for (int i = 0; i < n; i++)
    if (e->assignment[i] >= 0 && ((num_args && !lists[i]) ||
                                  (num_outputs && !outs[i])))
      return xrt__fail(XRT_INVALID_ARGUMENT, "the argument or output list of "
                       "participant %d (on this process) is NULL", i);
  return XRT_OK;
}

/* xrt_execute_multi on a multi-process client: this process's
 * participants only (it holds e). */
static xrt_status xrt__mp_execute_multi(
    xrt__executable *e, xrt_buffer *const *const *lists, int num_lists,
    int num_args, xrt_buffer **const *outs, int num_outputs,
    const xrt_execute_options *o, xrt_event **out_done) {
  xrt__client *c = e->client;
  xrt__multi m;
  memset(&m, 0, sizeof m);
  int lids[XRT__ARRAY_SIZE(m.devs)];
  xrt_status s = xrt__mp_multi_check(e, num_lists, num_args, num_outputs,
                                     lists, outs, o);
  for (int i = 0; !s && i < num_lists; i++) {
    if (e->assignment[i] < 0) continue;
    if (m.n == (int)XRT__ARRAY_SIZE(m.devs)) {
      s = xrt__fail(XRT_INVALID_ARGUMENT, "more than %d participants on one "
                    "process", m.n);
      break;
    }
    lids[m.n] = i;
    m.devs[m.n++] = &c->devices[e->assignment[i]];
  }
  /* Counted even when this process runs nobody, so ids stay in step. */
  uint64_t id = o && o->launch_id
                    ? o->launch_id
                    : atomic_fetch_add_explicit(&c->mp->next_launch, 1,
                                                memory_order_relaxed);
  if (!s && m.n == 0) { /* nothing here: done at once */
    xrt__executable_unref(e);
    if (!out_done) return XRT_OK;
    xrt__event *ev = xrt__event_new(c, 0);
    if (!ev) return xrt__nomem("an event");
    xrt__event_complete(ev, XRT_OK, NULL);
    s = xrt__event_publish(ev, out_done);
    xrt__event_unref(ev);
    return s;
  }
  if (!s) s = xrt__multi_fill(e, &m, lids, lists, NULL, &id); /* ours */
  if (!s) s = xrt__multi_start(e, &m, lids, num_outputs ? outs : NULL,
                               out_done);
  xrt__multi_free(e, &m, !s);
  xrt__executable_unref(e);
  return s;
}

/* ---- per-participant launches across processes (issue #11) ----
 *
 * Included once in section 13a.  Besides xrt_execute_multi, a launch of a
 * multi-process executable can be made participant by participant, as
 * MPMD launches are (xrt_execute_async with options.launch_id, replica and
 * partition: xrt__exec_position refuses a participant of another process).
 * Every process then runs its own participants under one launch id, so
 * the id must be the same in every process: xrt_client_new_launch_id on a
 * multi-process client counts from the same counter as
 * xrt__mp_execute_multi, which every process advances alike as long as
 * they issue the same launches in the same order. */

static uint64_t xrt__mp_new_launch_id(xrt__client *c) {
  return atomic_fetch_add_explicit(&c->mp->next_launch, 1,
                                   memory_order_relaxed);
}

/* ---- without MPI: the calls exist and say so ---- */

#ifndef XRT_HAVE_MPI
void xrt_mpi_options_init(xrt_mpi_options *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->topology.process_index = options->topology.process_count = -1;
  options->topology.host_index = -1;
  options->topology.local_rank = options->topology.local_world_size = -1;
  options->timeout_ms = 60000;
}

xrt_status xrt_mpi_init(const xrt_mpi_options *options) {
  XRT__UNUSED(options);
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_mpi_init: xrt was built without "
                   "MPI (build with make XRT_MPI=1)");
}

xrt_status xrt_mpi_finalize(void) {
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_mpi_finalize: xrt was built "
                   "without MPI (build with make XRT_MPI=1)");
}

xrt_status xrt_mpi_set_timeout(int64_t timeout_ms) {
  XRT__UNUSED(timeout_ms);
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_mpi_set_timeout: xrt was built "
                   "without MPI (build with make XRT_MPI=1)");
}

xrt_status xrt_mpi_topology(xrt_topology *out) {
  XRT__UNUSED(out);
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_mpi_topology: xrt was built "
                   "without MPI (build with make XRT_MPI=1)");
}
#endif

/* ======================================================================
 * 13b. Sharding specs, sharded arrays and pmap
 *
 * As JAX's pmap defines them (jax/_src/sharding_specs.py,
 * ShardingSpec.indices):
 *   - spec math: structure checks, piece shapes and where each device's
 *     piece starts in the logical array;
 *   - host split and assembly (strided copies, overlapped transfers);
 *   - the sharded-array object (a handle kind of its own);
 *   - xrt_execute_sharded over xrt_execute_multi;
 *   - pmap: a compile cache keyed by argument signature;
 *   - across processes ("Across processes" below): pieces held elsewhere are
 *     NULL, assembly to host is collective, launches go through 13a.
 * Only the public buffer, event, compile and execute calls are used, plus
 * the handle table and the executable's client.
 * ==================================================================== */

/* ---- spec math ---- */

/* Sharded axes of a spec, numbered in dimension order: an Unstacked
 * dimension gives one, a Chunked dimension one per chunk factor. */
typedef struct xrt__spec_axes {
  int n;
  int64_t size[XRT_MAX_MESH_DIMS];
  int mesh_dim[XRT_MAX_MESH_DIMS]; /* the mesh dimension that walks it */
} xrt__spec_axes;

/* More devices than this is a malformed spec, not a machine. */
#define XRT__SPEC_MAX_DEVICES ((int64_t)1 << 20)

static int64_t xrt__mesh_size(const xrt_mesh_mapping *m,
                              const xrt__spec_axes *ax) {
  return m->kind == XRT_MESH_REPLICATED ? m->replicas : ax->size[m->axis];
}

/* Checks one dimension's entry; counts its sharded axes into *ax. */
static xrt_status xrt__spec_check_dim(const xrt_dim_sharding *ds, int d,
                                      xrt__spec_axes *ax) {
  switch (ds->kind) {
  case XRT_DIM_NO_SHARDING: return XRT_OK;
  case XRT_DIM_UNSTACKED:
    if (ds->size < 1)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d: "
                       "Unstacked size %" PRId64 " is not positive", d,
                       ds->size);
    if (ax->n == XRT_MAX_MESH_DIMS) break;
    ax->size[ax->n++] = ds->size;
    return XRT_OK;
  case XRT_DIM_CHUNKED:
    if (ds->num_chunks < 1 || ds->num_chunks > XRT_MAX_CHUNKS)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d: "
                       "%d chunk factors, expected 1..%d", d, ds->num_chunks,
                       XRT_MAX_CHUNKS);
    for (int i = 0; i < ds->num_chunks; i++) {
      if (ds->chunks[i] < 1 || ds->chunks[i] > XRT__SPEC_MAX_DEVICES)
        return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d: "
                         "chunk factor %d is %" PRId64 ", expected 1..%" PRId64,
                         d, i, ds->chunks[i], XRT__SPEC_MAX_DEVICES);
      if (ax->n == XRT_MAX_MESH_DIMS) goto too_many;
      ax->size[ax->n++] = ds->chunks[i];
    }
    return XRT_OK;
  default:
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d has "
                     "an unknown kind %d", d, (int)ds->kind);
  }
too_many:
  return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: dimension %d: more "
                   "than %d sharded axes (each needs its own mesh dimension)",
                   d, XRT_MAX_MESH_DIMS);
}

/* Checks one mesh dimension and records which sharded axis it walks. */
static xrt_status xrt__spec_check_mesh_dim(const xrt_mesh_mapping *m, int i,
                                           xrt__spec_axes *ax) {
  if (m->kind == XRT_MESH_REPLICATED) {
    if (m->replicas < 1 || m->replicas > XRT__SPEC_MAX_DEVICES)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: mesh dimension "
                       "%d: Replicated(%" PRId64 ") must be in 1..%" PRId64, i,
                       m->replicas, XRT__SPEC_MAX_DEVICES);
    return XRT_OK;
  }
  if (m->kind != XRT_MESH_SHARDED_AXIS)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: mesh dimension %d "
                     "has an unknown kind %d", i, (int)m->kind);
  if (m->axis < 0 || m->axis >= ax->n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: mesh dimension %d: "
                     "ShardedAxis(%d) but the spec has %d sharded axes", i,
                     m->axis, ax->n);
  if (ax->mesh_dim[m->axis] >= 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: sharded axis %d is "
                     "mapped twice (mesh dimensions %d and %d)", m->axis,
                     ax->mesh_dim[m->axis], i);
  ax->mesh_dim[m->axis] = i;
  return XRT_OK;
}

/* The structure of a spec, without a logical shape: valid kinds and
 * counts, every sharded axis mapped exactly once.  *out_devices (may be
 * NULL) receives the device count. */
static xrt_status xrt__spec_axes_of(const xrt_sharding_spec *spec,
                                    xrt__spec_axes *ax, int64_t *out_devices) {
  if (!spec)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec is NULL");
  if (spec->rank < 0 || spec->rank > XRT_MAX_RANK)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: rank %d is outside "
                     "0..%d", spec->rank, XRT_MAX_RANK);
  if (spec->num_mesh_dims < 0 || spec->num_mesh_dims > XRT_MAX_MESH_DIMS)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: %d mesh dimensions,"
                     " expected 0..%d", spec->num_mesh_dims, XRT_MAX_MESH_DIMS);
  memset(ax, 0, sizeof *ax);
  for (int i = 0; i < XRT_MAX_MESH_DIMS; i++) ax->mesh_dim[i] = -1;
  xrt_status s;
  for (int d = 0; d < spec->rank; d++)
    if ((s = xrt__spec_check_dim(&spec->dims[d], d, ax))) return s;
  for (int i = 0; i < spec->num_mesh_dims; i++)
    if ((s = xrt__spec_check_mesh_dim(&spec->mesh[i], i, ax))) return s;
  for (int a = 0; a < ax->n; a++)
    if (ax->mesh_dim[a] < 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: sharded axis %d "
                       "is not mapped to any mesh dimension", a);
  int64_t devices = 1;
  for (int i = 0; i < spec->num_mesh_dims; i++) {
    devices *= xrt__mesh_size(&spec->mesh[i], ax);
    if (devices > XRT__SPEC_MAX_DEVICES)
      return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec: the mesh spans "
                       "more than %" PRId64 " devices", XRT__SPEC_MAX_DEVICES);
  }
  if (out_devices) *out_devices = devices;
  return XRT_OK;
}

static int64_t xrt__chunk_total(const xrt_dim_sharding *ds) {
  int64_t t = 1;
  for (int i = 0; i < ds->num_chunks; i++) t *= ds->chunks[i];
  return t;
}

/* Checks the spec against a logical shape; the structure is checked too. */
static xrt_status xrt__spec_check(const xrt_sharding_spec *spec,
                                  const xrt_shape *logical,
                                  xrt__spec_axes *ax, int64_t *out_devices) {
  xrt_status s = xrt__spec_axes_of(spec, ax, out_devices);
  if (s) return s;
  if (!logical) return xrt__fail(XRT_INVALID_ARGUMENT, "logical shape is NULL");
  size_t bytes;
  if ((s = xrt__shape_check(logical, &bytes))) return s;
  if (logical->rank != spec->rank)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec has rank %d, the "
                     "array has rank %d", spec->rank, (int)logical->rank);
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    int64_t size = logical->dims[d];
    if (ds->kind == XRT_DIM_CHUNKED && size % xrt__chunk_total(ds))
      return xrt__fail(XRT_INVALID_ARGUMENT, "dimension %d: %" PRId64 " chunks"
                       " do not divide size %" PRId64, d, xrt__chunk_total(ds),
                       size);
    if (ds->kind == XRT_DIM_UNSTACKED && size != ds->size)
      return xrt__fail(XRT_INVALID_ARGUMENT, "dimension %d: Unstacked(%" PRId64
                       ") but the dimension has size %" PRId64, d, ds->size,
                       size);
  }
  return XRT_OK;
}

/* The piece of every device: its shape drops Unstacked dimensions and
 * divides Chunked ones. */
static xrt_shape xrt__spec_piece_shape(const xrt_sharding_spec *spec,
                                       const xrt_shape *logical) {
  xrt_shape p;
  memset(&p, 0, sizeof p);
  p.dtype = logical->dtype;
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    if (ds->kind == XRT_DIM_UNSTACKED) continue;
    p.dims[p.rank++] = ds->kind == XRT_DIM_CHUNKED
                           ? logical->dims[d] / xrt__chunk_total(ds)
                           : logical->dims[d];
  }
  return p;
}

/* Where device k's piece starts (start[d] per logical dimension) and which
 * piece it is (*piece: the row-major index over the sharded axes, so
 * replicas of a piece share it).  The spec is checked already. */
static void xrt__spec_locate(const xrt_sharding_spec *spec,
                             const xrt__spec_axes *ax,
                             const xrt_shape *logical, int64_t k,
                             int64_t *start, int64_t *piece) {
  int64_t coord[XRT_MAX_MESH_DIMS], axis_index[XRT_MAX_MESH_DIMS] = {0};
  /* Devices are row-major over the mesh: the last mesh dimension is
   * fastest. */
  for (int i = spec->num_mesh_dims - 1; i >= 0; i--) {
    int64_t size = xrt__mesh_size(&spec->mesh[i], ax);
    coord[i] = k % size;
    k /= size;
  }
  for (int i = 0; i < spec->num_mesh_dims; i++)
    if (spec->mesh[i].kind == XRT_MESH_SHARDED_AXIS)
      axis_index[spec->mesh[i].axis] = coord[i];
  int64_t p = 0;
  for (int a = 0; a < ax->n; a++) p = p * ax->size[a] + axis_index[a];
  *piece = p;
  int a = 0;
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    if (ds->kind == XRT_DIM_NO_SHARDING) {
      start[d] = 0;
    } else if (ds->kind == XRT_DIM_UNSTACKED) {
      start[d] = axis_index[a++];
    } else { /* Chunked: chunk factors c0 (outermost) .. cn */
      int64_t chunk = 0;
      for (int i = 0; i < ds->num_chunks; i++)
        chunk = chunk * ds->chunks[i] + axis_index[a++];
      start[d] = chunk * (logical->dims[d] / xrt__chunk_total(ds));
    }
  }
}

/* Extent of a piece along every logical dimension (1 where Unstacked). */
static void xrt__spec_extent(const xrt_sharding_spec *spec,
                             const xrt_shape *logical, int64_t *ext) {
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    ext[d] = ds->kind == XRT_DIM_UNSTACKED ? 1
             : ds->kind == XRT_DIM_CHUNKED
                 ? logical->dims[d] / xrt__chunk_total(ds)
                 : logical->dims[d];
  }
}

void xrt_sharding_spec_init(xrt_sharding_spec *spec, int rank) {
  if (!spec) return;
  memset(spec, 0, sizeof *spec);
  spec->rank = rank;
}

xrt_status xrt_sharding_spec_validate(const xrt_sharding_spec *spec,
                                      const xrt_shape *logical) {
  xrt__spec_axes ax;
  return xrt__spec_check(spec, logical, &ax, NULL);
}

int64_t xrt_sharding_spec_num_devices(const xrt_sharding_spec *spec) {
  xrt__spec_axes ax;
  int64_t n;
  return xrt__spec_axes_of(spec, &ax, &n) ? -1 : n;
}

xrt_status xrt_sharding_spec_shard_shape(const xrt_sharding_spec *spec,
                                         const xrt_shape *logical,
                                         xrt_shape *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__spec_axes ax;
  xrt_status s = xrt__spec_check(spec, logical, &ax, NULL);
  if (s) return s;
  *out = xrt__spec_piece_shape(spec, logical);
  return XRT_OK;
}

xrt_status xrt_sharding_spec_logical_shape(const xrt_sharding_spec *spec,
                                           const xrt_shape *shard,
                                           xrt_shape *out) {
  XRT__CHECK_ARG(out && shard, "shard or out is NULL");
  xrt__spec_axes ax;
  xrt_status s = xrt__spec_axes_of(spec, &ax, NULL);
  if (s) return s;
  int unstacked = 0;
  for (int d = 0; d < spec->rank; d++)
    unstacked += spec->dims[d].kind == XRT_DIM_UNSTACKED;
  if (shard->rank != spec->rank - unstacked)
    return xrt__fail(XRT_INVALID_ARGUMENT, "sharding spec of rank %d with %d "
                     "Unstacked dimension(s) needs pieces of rank %d, got %d",
                     spec->rank, unstacked, spec->rank - unstacked,
                     (int)shard->rank);
  xrt_shape l;
  memset(&l, 0, sizeof l);
  l.dtype = shard->dtype;
  l.rank = spec->rank;
  for (int d = 0, p = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    if (ds->kind == XRT_DIM_UNSTACKED) {
      l.dims[d] = ds->size;
      continue;
    }
    int64_t f = ds->kind == XRT_DIM_CHUNKED ? xrt__chunk_total(ds) : 1;
    if (shard->dims[p] < 0 || (f > 1 && shard->dims[p] > INT64_MAX / f))
      return xrt__fail(XRT_INVALID_ARGUMENT, "piece dimension %d (%" PRId64
                       ") is negative or too large", p, shard->dims[p]);
    l.dims[d] = shard->dims[p++] * f;
  }
  if ((s = xrt__spec_check(spec, &l, &ax, NULL))) return s;
  *out = l;
  return XRT_OK;
}

xrt_status xrt_sharding_spec_shard_start(const xrt_sharding_spec *spec,
                                         const xrt_shape *logical,
                                         int64_t device, int64_t *start) {
  XRT__CHECK_ARG(start, "start is NULL");
  xrt__spec_axes ax;
  int64_t n, piece;
  xrt_status s = xrt__spec_check(spec, logical, &ax, &n);
  if (s) return s;
  if (device < 0 || device >= n)
    return xrt__fail(XRT_OUT_OF_RANGE, "device %" PRId64 " is outside 0..%"
                     PRId64 " of the spec's mesh", device, n - 1);
  xrt__spec_locate(spec, &ax, logical, device, start, &piece);
  return XRT_OK;
}

/* ---- strided copies between a logical array and one dense piece ---- */

/* A box [start, start + ext) of a row-major array, reduced to runs: dims
 * 0..outer-1 are walked, each step moves one contiguous run of run_bytes. */
typedef struct xrt__box {
  int rank, outer;
  size_t run_bytes;
  int64_t stride[XRT_MAX_RANK]; /* bytes, of the logical array */
  int64_t start[XRT_MAX_RANK], ext[XRT_MAX_RANK];
  size_t offset;                /* of the box's first element */
  bool empty;
} xrt__box;

static void xrt__box_init(xrt__box *b, const xrt_shape *logical,
                          const int64_t *start, const int64_t *ext) {
  int r = logical->rank;
  memset(b, 0, sizeof *b);
  b->rank = r;
  int64_t st = (int64_t)xrt_dtype_size(logical->dtype);
  for (int d = r - 1; d >= 0; d--) {
    b->stride[d] = st;
    st *= logical->dims[d];
    b->start[d] = start[d];
    b->ext[d] = ext[d];
    b->offset += (size_t)(start[d] * b->stride[d]);
    if (ext[d] == 0) b->empty = true;
  }
  /* Trailing dimensions taken whole merge into the run, plus the first
   * partial one from the end. */
  int d = r - 1;
  while (d >= 0 && ext[d] == logical->dims[d]) d--;
  b->outer = d < 0 ? 0 : d;
  b->run_bytes = (size_t)xrt_dtype_size(logical->dtype);
  for (int j = r - 1; j >= b->outer && j >= 0; j--)
    b->run_bytes *= (size_t)ext[j];
}

/* Whether the box is one contiguous range of the logical array. */
static bool xrt__box_contiguous(const xrt__box *b) {
  for (int d = 0; d < b->outer; d++)
    if (b->ext[d] != 1) return false;
  return true;
}

/* Copies the box out of (to_piece) or into the logical array. */
static void xrt__box_copy(const xrt__box *b, char *array, char *piece,
                          bool to_piece) {
  if (b->empty) return;
  int64_t idx[XRT_MAX_RANK] = {0};
  for (;;) {
    size_t off = b->offset;
    for (int d = 0; d < b->outer; d++) off += (size_t)(idx[d] * b->stride[d]);
    if (to_piece) memcpy(piece, array + off, b->run_bytes);
    else memcpy(array + off, piece, b->run_bytes);
    piece += b->run_bytes;
    int d = b->outer - 1;
    while (d >= 0 && ++idx[d] == b->ext[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/* ---- sharded arrays ---- */

typedef struct xrt__sharded {
  xrt__link link; /* first: the list of live arrays */
  xrt__client *client;
  uintptr_t handle;
  xrt_shape logical, piece;
  xrt_sharding_spec spec;
  xrt__spec_axes axes;
  int n;
  xrt_buffer **bufs;    /* owned, in mesh order */
  xrt_device **devices; /* of each piece */
} xrt__sharded;

/* Live sharded arrays of every client, so that client release frees its
 * own (a process-wide list keeps the client struct untouched). */
static xrt__link xrt__sharded_live = {&xrt__sharded_live, &xrt__sharded_live};
static pthread_mutex_t xrt__sharded_mu = PTHREAD_MUTEX_INITIALIZER;

static xrt__sharded *xrt__sharded_get(const xrt_sharded_array *a) {
  return (xrt__sharded *)xrt__hget(a, XRT__H_SHARDED);
}

/* Frees the object; its buffers only when release_buffers is set. */
static void xrt__sharded_free(xrt__sharded *a, bool release_buffers) {
  xrt__hfree_handle(a->handle);
  pthread_mutex_lock(&xrt__sharded_mu);
  xrt__link_remove(&a->link);
  pthread_mutex_unlock(&xrt__sharded_mu);
  for (int k = 0; release_buffers && k < a->n; k++)
    xrt_buffer_release(a->bufs[k]);
  xrt__free(&a->client->allocator, a->bufs);
  xrt__free(&a->client->allocator, a->devices);
  xrt__free(&a->client->allocator, a);
}

/* Called by xrt__client_free before it frees buffers. */
static void xrt__sharded_release_all(xrt__client *c) {
  for (;;) {
    xrt__sharded *found = NULL;
    pthread_mutex_lock(&xrt__sharded_mu);
    for (xrt__link *l = xrt__sharded_live.next; l != &xrt__sharded_live;
         l = l->next)
      if (((xrt__sharded *)l)->client == c) {
        found = (xrt__sharded *)l;
        break;
      }
    pthread_mutex_unlock(&xrt__sharded_mu);
    if (!found) return;
    xrt__sharded_free(found, true);
  }
}

/* A new array object over n buffers (taken over only on success; the spec
 * is checked already). */
static xrt_status xrt__sharded_new(xrt__client *c, const xrt_shape *logical,
                                   const xrt_sharding_spec *spec,
                                   const xrt__spec_axes *ax,
                                   xrt_buffer *const *bufs, int n,
                                   xrt__sharded **out) {
  xrt__sharded *a = (xrt__sharded *)xrt__calloc(&c->allocator, 1, sizeof *a);
  if (!a) return xrt__nomem("a sharded array");
  a->client = c;
  a->logical = *logical;
  a->piece = xrt__spec_piece_shape(spec, logical);
  a->spec = *spec;
  a->axes = *ax;
  a->n = n;
  a->bufs = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n,
                                       sizeof *a->bufs);
  a->devices = (xrt_device **)xrt__calloc(&c->allocator, (size_t)n,
                                          sizeof *a->devices);
  if (a->bufs && a->devices) a->handle = xrt__hnew(a, XRT__H_SHARDED);
  if (!a->handle) {
    xrt__free(&c->allocator, a->bufs);
    xrt__free(&c->allocator, a->devices);
    xrt__free(&c->allocator, a);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of host memory or handles");
  }
  for (int k = 0; k < n; k++) {
    a->bufs[k] = bufs[k];
    a->devices[k] = bufs[k] ? xrt_buffer_device(bufs[k]) : NULL;
  }
  pthread_mutex_lock(&xrt__sharded_mu);
  xrt__link_add(&xrt__sharded_live, &a->link);
  pthread_mutex_unlock(&xrt__sharded_mu);
  *out = a;
  return XRT_OK;
}

/* A failure's code and message, kept across later calls that may set
 * their own. */
typedef struct xrt__saved_error {
  xrt_status code;
  char message[sizeof xrt__error.message];
} xrt__saved_error;

static void xrt__save_error(xrt__saved_error *e, xrt_status code) {
  if (e->code || !code) return; /* the first failure wins */
  e->code = code;
  snprintf(e->message, sizeof e->message, "%s", xrt_last_error());
}

static xrt_status xrt__restore_error(const xrt__saved_error *e) {
  return e->code ? xrt__fail(e->code, "%s", e->message) : XRT_OK;
}

/* Waits for and releases n events (NULL entries skipped), keeping the
 * first failure in *err. */
static void xrt__await_all(xrt_event **ev, int n, xrt__saved_error *err) {
  for (int k = 0; k < n; k++) {
    if (!ev[k]) continue;
    xrt__save_error(err, xrt_event_await(ev[k]));
    xrt_event_release(ev[k]);
    ev[k] = NULL;
  }
}

/* Per-device work of a split or an assembly. */
typedef struct xrt__split_plan {
  int64_t pieces;   /* distinct pieces */
  int64_t *piece;   /* [n]: piece of each device */
  int *first;       /* [pieces]: first device holding it */
  char **stage;     /* [pieces]: host staging, NULL when contiguous */
  xrt_event **ev;   /* [n] */
} xrt__split_plan;

static void xrt__plan_free(xrt__client *c, xrt__split_plan *p) {
  for (int64_t i = 0; p->stage && i < p->pieces; i++)
    xrt__free(&c->allocator, p->stage[i]);
  xrt__free(&c->allocator, p->piece);
  xrt__free(&c->allocator, p->first);
  xrt__free(&c->allocator, p->stage);
  xrt__free(&c->allocator, p->ev);
}

/* Finds each device's piece and the first device holding each piece. */
static xrt_status xrt__plan_init(xrt__client *c, const xrt_sharding_spec *spec,
                                 const xrt__spec_axes *ax,
                                 const xrt_shape *logical, int n,
                                 xrt__split_plan *p) {
  memset(p, 0, sizeof *p);
  p->pieces = 1;
  for (int a = 0; a < ax->n; a++) p->pieces *= ax->size[a];
  p->piece = (int64_t *)xrt__calloc(&c->allocator, (size_t)n, sizeof(int64_t));
  p->first = (int *)xrt__calloc(&c->allocator, (size_t)p->pieces, sizeof(int));
  p->stage = (char **)xrt__calloc(&c->allocator, (size_t)p->pieces,
                                  sizeof(char *));
  p->ev = (xrt_event **)xrt__calloc(&c->allocator, (size_t)n,
                                    sizeof(xrt_event *));
  if (!p->piece || !p->first || !p->stage || !p->ev) {
    xrt__plan_free(c, p);
    return xrt__nomem("a sharded upload plan");
  }
  for (int64_t i = 0; i < p->pieces; i++) p->first[i] = -1;
  int64_t start[XRT_MAX_RANK];
  for (int k = 0; k < n; k++) {
    xrt__spec_locate(spec, ax, logical, k, start, &p->piece[k]);
    if (p->first[p->piece[k]] < 0) p->first[p->piece[k]] = k;
  }
  return XRT_OK;
}

/* The box of device k's piece. */
static void xrt__piece_box(const xrt_sharding_spec *spec,
                           const xrt__spec_axes *ax, const xrt_shape *logical,
                           int k, xrt__box *box) {
  int64_t start[XRT_MAX_RANK], ext[XRT_MAX_RANK], piece;
  xrt__spec_locate(spec, ax, logical, k, start, &piece);
  xrt__spec_extent(spec, logical, ext);
  xrt__box_init(box, logical, start, ext);
}

/* Host memory holding device k's piece: inside data when the piece is
 * contiguous there, else a staging copy made once per piece. */
static xrt_status xrt__piece_source(xrt__client *c, const xrt__sharded *a,
                                    const char *data, xrt__split_plan *p,
                                    int k, const void **out) {
  xrt__box box;
  xrt__piece_box(&a->spec, &a->axes, &a->logical, k, &box);
  if (box.empty || xrt__box_contiguous(&box)) {
    *out = box.empty ? NULL : data + box.offset; /* data may be NULL then */
    return XRT_OK;
  }
  int64_t id = p->piece[k];
  if (!p->stage[id]) {
    p->stage[id] = (char *)xrt__alloc(&c->allocator,
                                      xrt_shape_bytes(&a->piece));
    if (!p->stage[id])
      return xrt__nomem("staging a sharded array's piece");
    xrt__box_copy(&box, (char *)(uintptr_t)data, p->stage[id], true);
  }
  *out = p->stage[id];
  return XRT_OK;
}

/* ---- sharded arrays across processes (issue #11) ----
 *
 * Included once by section 13b of xrt.c, after the split plan.  An array
 * of a client that joins several processes keeps devices[k] = piece k's
 * global device (this process's xrt__device handle, or another process's
 * XRT__H_RDEVICE handle) and bufs[k] = NULL for pieces held elsewhere.
 * Such arrays are made and used SPMD-style (see "Objects that span
 * processes" in xrt.h): on a multi-process client, assembling to host is
 * a collective of every process, whatever devices the array spans, so
 * that the choice of path never differs between processes. */

static xrt_status xrt__sharded_start(const char *fn, xrt_client *client,
                                     const xrt_shape *logical,
                                     const xrt_sharding_spec *spec,
                                     xrt_sharded_array **out_array,
                                     xrt__client **c, xrt__spec_axes *ax,
                                     int64_t *n);
static xrt_status xrt__spec_count_check(int64_t n, int given,
                                        const char *what);

/* Whether d is another process's device of client c. */
static bool xrt__mp_remote(const xrt__client *c, const xrt_device *d) {
  const xrt__rdev *r = c->mp ? xrt__rdev_get(d) : NULL;
  return r && r->client == c;
}

/* The failure of xrt_sharded_array_shard for a piece held elsewhere. */
static xrt_status xrt__mp_not_held(const xrt__sharded *a, int k) {
  const xrt_device *d = a->devices[k];
  if (!xrt__mp_remote(a->client, d))
    return xrt__fail(XRT_INTERNAL, "shard %d has no buffer", k);
  return xrt__fail(XRT_FAILED_PRECONDITION, "shard %d is held by process %d "
                   "(global device %d); this is process %d", k,
                   xrt_device_process_index(d), xrt_device_global_id(d),
                   a->client->mp->me);
}

/* What every message of an assembly starts with: the sender's status
 * reading its own pieces, so that every process fails alike. */
typedef struct xrt__asm_hdr {
  int32_t code;
  char message[252];
} xrt__asm_hdr;

/* One assembly: which process sends each distinct piece (holder: the
 * process of its first device in mesh order, alike in every process),
 * which processes hold it, and this process's first device holding it. */
typedef struct xrt__asm {
  xrt__client *c;
  const xrt_shape *logical;
  const xrt_sharding_spec *spec;
  const xrt__spec_axes *ax;
  int n, me, np;
  size_t piece_bytes;
  xrt__split_plan p;
  int *holder;         /* [pieces] */
  int *local;          /* [pieces]: this process's first device k, or -1 */
  unsigned char *held; /* [np][pieces]: process q holds piece i */
  xrt_transport_msg *msgs; /* [2 (np - 1)]: sends, then receives */
} xrt__asm;

static void xrt__asm_free(xrt__asm *m) {
  xrt__client *c = m->c;
  for (int i = 0; m->msgs && i < 2 * (m->np - 1); i++)
    xrt__free(&c->allocator, m->msgs[i].data);
  xrt__free(&c->allocator, m->msgs);
  xrt__free(&c->allocator, m->holder);
  xrt__free(&c->allocator, m->local);
  xrt__free(&c->allocator, m->held);
  xrt__plan_free(c, &m->p);
}

/* The process of piece k's device (this one for a local device). */
static int xrt__asm_process(const xrt__asm *m, xrt_device *const *devices,
                            int k) {
  return xrt__mp_remote(m->c, devices[k])
             ? xrt_device_process_index(devices[k])
             : m->me;
}

static xrt_status xrt__asm_init(xrt__asm *m, xrt_device *const *devices) {
  xrt__client *c = m->c;
  xrt_status s = xrt__plan_init(c, m->spec, m->ax, m->logical, m->n, &m->p);
  if (s) return s;
  size_t P = (size_t)m->p.pieces, np = (size_t)m->np;
  m->holder = (int *)xrt__calloc(&c->allocator, P, sizeof(int));
  m->local = (int *)xrt__calloc(&c->allocator, P, sizeof(int));
  m->held = (unsigned char *)xrt__calloc(&c->allocator, np * P, 1);
  m->msgs = (xrt_transport_msg *)xrt__calloc(&c->allocator, 2 * np,
                                             sizeof *m->msgs);
  if (!m->holder || !m->local || !m->held || !m->msgs)
    return xrt__nomem("assembling a sharded array");
  for (size_t i = 0; i < P; i++) m->local[i] = -1;
  for (int k = 0; k < m->n; k++) {
    int q = xrt__asm_process(m, devices, k);
    size_t i = (size_t)m->p.piece[k];
    if (q < 0 || q >= m->np)
      return xrt__fail(XRT_INVALID_ARGUMENT, "piece %d's device is not a "
                       "device of this client", k);
    m->held[(size_t)q * P + i] = 1;
    if (q == m->me && m->local[i] < 0) m->local[i] = k;
  }
  for (size_t i = 0; i < P; i++)
    m->holder[i] = xrt__asm_process(m, devices, m->p.first[i]);
  return XRT_OK;
}

/* Reads every piece this process holds into dst (each once, from its
 * first local device); the first failure goes to *err. */
static void xrt__asm_read_local(xrt__asm *m, xrt_buffer *const *bufs,
                                char *dst, xrt__saved_error *err) {
  xrt__client *c = m->c;
  for (int64_t i = 0; i < m->p.pieces && !err->code; i++) {
    int k = m->local[i];
    if (k < 0) continue;
    if (!bufs[k]) {
      xrt__save_error(err, xrt__fail(XRT_INTERNAL, "piece %d of this "
                                     "process has no buffer", k));
      break;
    }
    xrt__box box;
    xrt__piece_box(m->spec, m->ax, m->logical, k, &box);
    char *to = box.empty ? NULL : dst + box.offset;
    if (!box.empty && !xrt__box_contiguous(&box)) {
      to = m->p.stage[i] = (char *)xrt__alloc(&c->allocator, m->piece_bytes);
      if (!to) {
        xrt__save_error(err, xrt__nomem("staging a sharded array's piece"));
        break;
      }
    }
    xrt__save_error(err, xrt_buffer_to_host_async(bufs[k], to,
                                                  m->piece_bytes, &m->p.ev[k]));
  }
  xrt__await_all(m->p.ev, m->n, err);
  for (int64_t i = 0; i < m->p.pieces && !err->code; i++) {
    if (!m->p.stage[i]) continue;
    xrt__box box;
    xrt__piece_box(m->spec, m->ax, m->logical, m->local[i], &box);
    xrt__box_copy(&box, dst, m->p.stage[i], false);
  }
}

/* Whether process `from` sends piece i to process `to`: it is the
 * piece's holder and `to` holds no copy. */
static bool xrt__asm_sends(const xrt__asm *m, int64_t i, int from, int to) {
  return m->holder[i] == from &&
         !m->held[(size_t)to * (size_t)m->p.pieces + (size_t)i];
}

/* Copies (pack) or places (!pack) the pieces that `from` sends `to`
 * between dst and a message's payload. */
static void xrt__asm_move(const xrt__asm *m, int from, int to, char *dst,
                          char *payload, bool pack) {
  for (int64_t i = 0; i < m->p.pieces; i++) {
    if (!xrt__asm_sends(m, i, from, to)) continue;
    xrt__box box;
    xrt__piece_box(m->spec, m->ax, m->logical, m->p.first[i], &box);
    xrt__box_copy(&box, dst, payload, pack);
    payload += m->piece_bytes;
  }
}

static size_t xrt__asm_bytes(const xrt__asm *m, int from, int to) {
  size_t bytes = sizeof(xrt__asm_hdr);
  for (int64_t i = 0; i < m->p.pieces; i++)
    if (xrt__asm_sends(m, i, from, to)) bytes += m->piece_bytes;
  return bytes;
}

/* The messages: to every other process its missing pieces of ours (after
 * our status), and room for theirs. */
static xrt_status xrt__asm_messages(xrt__asm *m, char *dst,
                                    const xrt__saved_error *local) {
  xrt__asm_hdr hdr;
  memset(&hdr, 0, sizeof hdr);
  hdr.code = (int32_t)local->code;
  snprintf(hdr.message, sizeof hdr.message, "%.*s",
           (int)sizeof hdr.message - 1, local->message); /* truncated */
  int k = 0;
  for (int q = 0; q < m->np; q++) {
    if (q == m->me) continue;
    xrt_transport_msg *snd = &m->msgs[k], *rcv = &m->msgs[m->np - 1 + k++];
    size_t sb = xrt__asm_bytes(m, m->me, q), rb = xrt__asm_bytes(m, q, m->me);
    *snd = (xrt_transport_msg){q, xrt__calloc(&m->c->allocator, 1, sb), sb};
    *rcv = (xrt_transport_msg){q, xrt__calloc(&m->c->allocator, 1, rb), rb};
    if (!snd->data || !rcv->data)
      return xrt__nomem("the messages of a sharded array's assembly");
    memcpy(snd->data, &hdr, sizeof hdr);
    if (!local->code)
      xrt__asm_move(m, m->me, q, dst, (char *)snd->data + sizeof hdr, true);
  }
  return XRT_OK;
}

/* Places the received pieces; the first process that failed to read its
 * own fails the whole assembly (in every process alike). */
static xrt_status xrt__asm_place(xrt__asm *m, char *dst) {
  for (int k = 0; k < m->np - 1; k++) {
    const xrt_transport_msg *r = &m->msgs[m->np - 1 + k];
    xrt__asm_hdr hdr;
    memcpy(&hdr, r->data, sizeof hdr);
    hdr.message[sizeof hdr.message - 1] = 0;
    if (hdr.code)
      return xrt__fail((xrt_status)hdr.code, "process %d could not read its "
                       "pieces: %s", r->peer, hdr.message);
  }
  for (int k = 0; k < m->np - 1; k++) {
    const xrt_transport_msg *r = &m->msgs[m->np - 1 + k];
    char *payload = (char *)r->data + sizeof(xrt__asm_hdr);
    xrt__asm_move(m, r->peer, m->me, dst, payload, false);
  }
  return XRT_OK;
}

/* Assembles a logical array whose pieces (bufs[k] on devices[k], NULL
 * where another process holds it) span the processes of c, into dst in
 * every process.  Collective on a multi-process client: one core tag;
 * each distinct piece is read once by its holder and sent to the
 * processes that hold no copy.  On a client of one process, a local read.
 * dst is checked by the caller (it holds the logical array). */
static xrt_status xrt__mp_assemble(xrt__client *c, const xrt_shape *logical,
                                   const xrt_sharding_spec *spec,
                                   const xrt__spec_axes *ax, int n,
                                   xrt_buffer *const *bufs,
                                   xrt_device *const *devices, void *dst) {
  /* First, so that the counters stay in step whatever fails below. */
  uint64_t tag = c->mp ? xrt__mp_next_tag(c) : 0;
  xrt__asm m;
  memset(&m, 0, sizeof m);
  m.c = c;
  m.logical = logical;
  m.spec = spec;
  m.ax = ax;
  m.n = n;
  m.me = c->mp ? c->mp->me : 0;
  m.np = c->mp ? c->mp->nproc : 1;
  xrt_shape piece = xrt__spec_piece_shape(spec, logical);
  m.piece_bytes = xrt_shape_bytes(&piece);
  xrt__saved_error local = {XRT_OK, ""};
  xrt_status s = xrt__asm_init(&m, devices);
  if (!s) xrt__asm_read_local(&m, bufs, (char *)dst, &local);
  if (!s && m.np > 1) s = xrt__asm_messages(&m, (char *)dst, &local);
  if (!s && m.np > 1)
    s = xrt__mp_exchange(c, tag, m.msgs, m.np - 1, m.msgs + m.np - 1,
                         m.np - 1, "assembling a sharded array across "
                         "processes");
  if (!s && local.code) s = xrt__restore_error(&local);
  if (!s && m.np > 1) s = xrt__asm_place(&m, (char *)dst);
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  xrt__asm_free(&m);
  return xrt__restore_error(&err);
}

/* xrt_sharded_array_to_host's and xrt_variable_to_host's way on a client
 * of several processes: the checks of dst, then the collective. */
static xrt_status xrt__mp_to_host(xrt__client *c, const xrt_shape *logical,
                                  const xrt_sharding_spec *spec,
                                  const xrt__spec_axes *ax, int n,
                                  xrt_buffer *const *bufs,
                                  xrt_device *const *devices, void *dst,
                                  size_t dst_bytes) {
  size_t bytes = xrt_shape_bytes(logical);
  XRT__CHECK_ARG(dst || bytes == 0, "dst is NULL");
  if (dst_bytes < bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "destination holds %zu bytes, the "
                     "array has %zu", dst_bytes, bytes);
  return xrt__mp_assemble(c, logical, spec, ax, n, bufs, devices, dst);
}

/* Checks piece k of xrt_sharded_array_create_global: a buffer exactly
 * where devices[k] is this process's, on that device, of the piece's
 * shape. */
/* Buffer k of a piece list: of the spec's piece shape, and not one of
 * bufs[0..k) again. */
static xrt_status xrt__piece_buffer_check(const xrt_shape *piece,
                                          xrt_buffer *const *bufs, int k) {
  xrt_shape have;
  xrt_buffer_shape(bufs[k], &have);
  if (!xrt__shape_equal(&have, piece)) {
    char h[128], w[128];
    xrt_shape_format(&have, h, sizeof h);
    xrt_shape_format(piece, w, sizeof w);
    return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is %s, the spec's "
                     "pieces are %s", k, h, w);
  }
  for (int j = 0; j < k; j++)
    if (bufs[j] == bufs[k])
      return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] and buffers[%d] are "
                       "the same buffer", j, k);
  return XRT_OK;
}

static xrt_status xrt__global_piece_check(xrt__client *c,
                                          const xrt_shape *piece,
                                          xrt_device *const *devices,
                                          xrt_buffer *const *bufs, int k) {
  xrt_device *dev = devices[k];
  if (xrt__mp_remote(c, dev)) {
    if (bufs[k])
      return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is given, but "
                       "devices[%d] (global device %d) belongs to process %d; "
                       "this is process %d", k, k, xrt_device_global_id(dev),
                       xrt_device_process_index(dev), c->mp->me);
    return XRT_OK;
  }
  xrt__device *d = xrt__device_get(dev);
  if (!d || d->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "devices[%d] is not a device of "
                     "this client", k);
  if (!bufs[k])
    return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is NULL, but "
                     "devices[%d] (global device %d) is this process's", k, k,
                     xrt_device_global_id(dev));
  xrt_device *on = xrt_buffer_device(bufs[k]);
  if (!on || xrt__device_get(on)->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is not a live buffer "
                     "of this client", k);
  if (on != dev)
    return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is on global device "
                     "%d, devices[%d] is global device %d", k,
                     xrt_device_global_id(on), k, xrt_device_global_id(dev));
  return xrt__piece_buffer_check(piece, bufs, k);
}

xrt_status xrt_sharded_array_create_global(
    xrt_client *client, const xrt_shape *logical,
    const xrt_sharding_spec *spec, xrt_device *const *devices,
    xrt_buffer *const *buffers, int num_pieces,
    xrt_sharded_array **out_array) {
  xrt__client *c;
  xrt__spec_axes ax;
  int64_t n;
  xrt_status s = xrt__sharded_start(__func__, client, logical, spec,
                                    out_array, &c, &ax, &n);
  if (s || (s = xrt__spec_count_check(n, num_pieces, "pieces"))) return s;
  XRT__CHECK_ARG(devices && buffers, "devices or buffers is NULL");
  xrt_shape piece = xrt__spec_piece_shape(spec, logical);
  for (int k = 0; k < num_pieces; k++)
    if ((s = xrt__global_piece_check(c, &piece, devices, buffers, k)))
      return s;
  xrt__sharded *a;
  if ((s = xrt__sharded_new(c, logical, spec, &ax, buffers, num_pieces, &a)))
    return s;
  for (int k = 0; k < num_pieces; k++) a->devices[k] = devices[k];
  *out_array = (xrt_sharded_array *)a->handle;
  return XRT_OK;
}

/* A launch over arrays of a multi-process client runs on the
 * executable's assignment (global devices): the arguments must lie
 * there. */
static xrt_status xrt__mp_launch_check(xrt_executable *exe,
                                       const xrt_device *const *devices,
                                       int n) {
  for (int d = 0; d < n; d++) {
    xrt_device *want = xrt_executable_device(exe, d);
    if (devices[d] != want)
      return xrt__fail(XRT_INVALID_ARGUMENT, "logical id %d of @%s runs on "
                       "global device %d, but the arguments' shard %d is on "
                       "global device %d", d, xrt_executable_name(exe),
                       xrt_device_global_id(want), d,
                       xrt_device_global_id(devices[d]));
  }
  return XRT_OK;
}

/* Checks the devices of a split: n live devices of client c (or global
 * devices of its other processes). */
static xrt_status xrt__check_devices(xrt__client *c, xrt_device *const *devs,
                                     int n, int64_t want) {
  if (n != want)
    return xrt__fail(XRT_INVALID_ARGUMENT, "the sharding spec spans %" PRId64
                     " devices, %d were given", want, n);
  XRT__CHECK_ARG(devs, "devices is NULL");
  for (int k = 0; k < n; k++) {
    xrt__device *d = xrt__device_get(devs[k]);
    if ((!d || d->client != c) && !xrt__mp_remote(c, devs[k]))
      return xrt__fail(XRT_INVALID_ARGUMENT, "devices[%d] is not a device of "
                       "this client", k);
  }
  return XRT_OK;
}

/* Enqueues every piece's upload, then waits for all of them. */
static xrt_status xrt__upload_pieces(xrt__sharded *a, const void *data,
                                     xrt_device *const *devs,
                                     xrt__split_plan *p) {
  xrt__client *c = a->client;
  xrt__saved_error err = {XRT_OK, ""};
  xrt_client *client = (xrt_client *)c->handle;
  for (int k = 0; k < a->n && !err.code; k++) {
    if (xrt__mp_remote(c, devs[k])) continue; /* another process's piece */
    const void *src = NULL;
    xrt_status s = xrt__piece_source(c, a, (const char *)data, p, k, &src);
    if (!s)
      s = xrt_buffer_from_host_async(client, devs[k], &a->piece, src,
                                     &a->bufs[k], &p->ev[k]);
    xrt__save_error(&err, s);
  }
  xrt__await_all(p->ev, a->n, &err);
  return xrt__restore_error(&err);
}

/* That as many pieces (what: "pieces", "buffers") were given as the
 * spec's n devices. */
static xrt_status xrt__spec_count_check(int64_t n, int given,
                                        const char *what) {
  if (given == n) return XRT_OK;
  return xrt__fail(XRT_INVALID_ARGUMENT, "the sharding spec spans %" PRId64
                   " devices, %d %s were given", n, given, what);
}

/* The checks that open both ways of making a sharded array, failing as
 * XRT__CHECK_ARG would in fn: out_array, the client, then the spec
 * (giving its axes and device count n). */
static xrt_status xrt__sharded_start(const char *fn, xrt_client *client,
                                     const xrt_shape *logical,
                                     const xrt_sharding_spec *spec,
                                     xrt_sharded_array **out_array,
                                     xrt__client **c, xrt__spec_axes *ax,
                                     int64_t *n) {
  if (!out_array)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: out_array is NULL", fn);
  *out_array = NULL;
  *c = xrt__client_get(client);
  if (!*c) return xrt__fail(XRT_INVALID_ARGUMENT, "%s: invalid client", fn);
  return xrt__spec_check(spec, logical, ax, n);
}

xrt_status xrt_sharded_array_from_host(xrt_client *client,
                                       const xrt_shape *logical,
                                       const void *data,
                                       const xrt_sharding_spec *spec,
                                       xrt_device *const *devices,
                                       int num_devices,
                                       xrt_sharded_array **out_array) {
  xrt__client *c;
  xrt__spec_axes ax;
  int64_t n;
  xrt_status s = xrt__sharded_start(__func__, client, logical, spec,
                                    out_array, &c, &ax, &n);
  if (s || (s = xrt__check_devices(c, devices, num_devices, n))) return s;
  XRT__CHECK_ARG(data || xrt_shape_bytes(logical) == 0, "data is NULL");
  /* The object is built first with no buffers, then filled. */
  xrt__sharded *a;
  xrt_buffer **none = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n,
                                                 sizeof *none);
  if (!none) return xrt__nomem("a sharded array's piece list");
  s = xrt__sharded_new(c, logical, spec, &ax, none, (int)n, &a);
  xrt__free(&c->allocator, none);
  if (s) return s;
  xrt__split_plan p;
  if (!(s = xrt__plan_init(c, spec, &ax, logical, (int)n, &p))) {
    s = xrt__upload_pieces(a, data, devices, &p);
    xrt__plan_free(c, &p);
  }
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt__sharded_free(a, true);
    return xrt__restore_error(&err);
  }
  for (int k = 0; k < a->n; k++) a->devices[k] = devices[k];
  *out_array = (xrt_sharded_array *)a->handle;
  return XRT_OK;
}

xrt_status xrt_sharded_array_to_host(xrt_sharded_array *array, void *dst,
                                     size_t dst_bytes) {
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or released sharded array");
  size_t bytes = xrt_shape_bytes(&a->logical);
  XRT__CHECK_ARG(dst || bytes == 0, "dst is NULL");
  if (dst_bytes < bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "destination holds %zu bytes, the "
                     "array has %zu", dst_bytes, bytes);
  xrt__client *c = a->client;
  if (c->mp) /* collective: mp_sharded.inc */
    return xrt__mp_assemble(c, &a->logical, &a->spec, &a->axes, a->n, a->bufs,
                            a->devices, dst);
  xrt__split_plan p;
  xrt_status s = xrt__plan_init(c, &a->spec, &a->axes, &a->logical, a->n, &p);
  if (s) return s;
  xrt__saved_error err = {XRT_OK, ""};
  size_t piece_bytes = xrt_shape_bytes(&a->piece);
  /* Each distinct piece is read once, from the first device holding it. */
  for (int64_t i = 0; i < p.pieces && !err.code; i++) {
    int k = p.first[i];
    xrt__box box;
    xrt__piece_box(&a->spec, &a->axes, &a->logical, k, &box);
    char *to = box.empty ? NULL : (char *)dst + box.offset;
    if (!box.empty && !xrt__box_contiguous(&box)) {
      to = p.stage[i] = (char *)xrt__alloc(&c->allocator, piece_bytes);
      if (!to) {
        xrt__save_error(&err, xrt__nomem("staging a sharded array's "
                                         "piece"));
        break;
      }
    }
    xrt__save_error(&err, xrt_buffer_to_host_async(a->bufs[k], to,
                                                   piece_bytes, &p.ev[k]));
  }
  xrt__await_all(p.ev, a->n, &err);
  for (int64_t i = 0; i < p.pieces && !err.code; i++) {
    if (!p.stage[i]) continue;
    xrt__box box;
    xrt__piece_box(&a->spec, &a->axes, &a->logical, p.first[i], &box);
    xrt__box_copy(&box, (char *)dst, p.stage[i], false);
  }
  xrt__plan_free(c, &p);
  return xrt__restore_error(&err);
}

/* Checks buffers given to xrt_sharded_array_create. */
static xrt_status xrt__check_pieces(xrt__client *c, const xrt_shape *piece,
                                    xrt_buffer *const *bufs, int n) {
  XRT__CHECK_ARG(bufs, "buffers is NULL");
  for (int k = 0; k < n; k++) {
    xrt_device *dev = xrt_buffer_device(bufs[k]);
    xrt__device *d = xrt__device_get(dev);
    if (!dev || !d || d->client != c)
      return xrt__fail(XRT_INVALID_ARGUMENT, "buffers[%d] is not a live buffer"
                       " of this client", k);
    xrt_status s = xrt__piece_buffer_check(piece, bufs, k);
    if (s) return s;
  }
  return XRT_OK;
}

xrt_status xrt_sharded_array_create(xrt_client *client,
                                    const xrt_shape *logical,
                                    const xrt_sharding_spec *spec,
                                    xrt_buffer *const *buffers,
                                    int num_buffers,
                                    xrt_sharded_array **out_array) {
  xrt__client *c;
  xrt__spec_axes ax;
  int64_t n;
  xrt_status s = xrt__sharded_start(__func__, client, logical, spec,
                                    out_array, &c, &ax, &n);
  if (s || (s = xrt__spec_count_check(n, num_buffers, "buffers"))) return s;
  xrt_shape piece = xrt__spec_piece_shape(spec, logical);
  if ((s = xrt__check_pieces(c, &piece, buffers, num_buffers))) return s;
  xrt__sharded *a;
  if ((s = xrt__sharded_new(c, logical, spec, &ax, buffers, num_buffers, &a)))
    return s;
  *out_array = (xrt_sharded_array *)a->handle;
  return XRT_OK;
}

xrt_status xrt_sharded_array_release(xrt_sharded_array *array) {
  if (!array) return XRT_OK;
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or already released sharded array");
  xrt__sharded_free(a, true);
  return XRT_OK;
}

int xrt_sharded_array_num_shards(const xrt_sharded_array *array) {
  xrt__sharded *a = xrt__sharded_get(array);
  return a ? a->n : -1;
}

xrt_buffer *xrt_sharded_array_shard(const xrt_sharded_array *array,
                                    int index) {
  xrt__sharded *a = xrt__sharded_get(array);
  if (!a) {
    xrt__fail(XRT_INVALID_ARGUMENT, "xrt_sharded_array_shard: invalid or "
              "released sharded array");
    return NULL;
  }
  if (index < 0 || index >= a->n) {
    xrt__fail(XRT_OUT_OF_RANGE, "shard %d is outside 0..%d", index, a->n - 1);
    return NULL;
  }
  if (!a->bufs[index]) xrt__mp_not_held(a, index); /* another process's */
  return a->bufs[index];
}

xrt_status xrt_sharded_array_shape(const xrt_sharded_array *array,
                                   xrt_shape *out) {
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or released sharded array");
  XRT__CHECK_ARG(out, "out is NULL");
  *out = a->logical;
  return XRT_OK;
}

xrt_status xrt_sharded_array_spec(const xrt_sharded_array *array,
                                  xrt_sharding_spec *out) {
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or released sharded array");
  XRT__CHECK_ARG(out, "out is NULL");
  *out = a->spec;
  return XRT_OK;
}

/* ---- execute over sharded arrays ---- */

/* pmap's out_axes=0: a new leading dimension Unstacked over n devices. */
static void xrt__default_out_spec(int rank, int n, xrt_sharding_spec *spec) {
  xrt_sharding_spec_init(spec, rank + 1);
  spec->dims[0].kind = XRT_DIM_UNSTACKED;
  spec->dims[0].size = n;
  spec->num_mesh_dims = 1;
  spec->mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  spec->mesh[0].axis = 0;
}

/* The devices every argument spans, checked to be the same list. */
static xrt_status xrt__sharded_args(xrt_sharded_array *const *args,
                                    int num_args, xrt__sharded **out) {
  XRT__CHECK_ARG(args || num_args == 0, "args is NULL");
  for (int i = 0; i < num_args; i++) {
    out[i] = xrt__sharded_get(args[i]);
    if (!out[i])
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d is not a live "
                       "sharded array", i);
    if (out[i]->client != out[0]->client)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d belongs to another "
                       "client than argument 0", i);
    if (out[i]->n != out[0]->n)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d spans %d devices, "
                       "argument 0 spans %d", i, out[i]->n, out[0]->n);
    for (int k = 0; k < out[i]->n; k++)
      if (out[i]->devices[k] != out[0]->devices[k])
        return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d has shard %d on "
                         "device %d, argument 0 on device %d", i, k,
                         xrt_device_global_id(out[i]->devices[k]),
                         xrt_device_global_id(out[0]->devices[k]));
  }
  return XRT_OK;
}

/* Output j's spec and logical shape, checked against the per-device
 * output shape of the executable. */
static xrt_status xrt__output_spec(xrt_executable *exe,
                                   const xrt_execute_options *o, int j, int n,
                                   xrt_sharding_spec *spec, xrt_shape *logical,
                                   xrt__spec_axes *ax) {
  xrt_shape piece;
  xrt_status s = xrt_executable_output_shape(exe, j, &piece);
  if (s) return s;
  if (o && o->output_specs && o->output_specs[j]) *spec = *o->output_specs[j];
  else xrt__default_out_spec(piece.rank, n, spec);
  int64_t devices;
  if ((s = xrt_sharding_spec_logical_shape(spec, &piece, logical)) ||
      (s = xrt__spec_check(spec, logical, ax, &devices))) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    return xrt__fail(s, "output %d: %s", j, err.message);
  }
  if (devices != n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "output %d: the sharding spec spans"
                     " %" PRId64 " devices, the execution runs on %d", j,
                     devices, n);
  return XRT_OK;
}

/* Scratch of one xrt_execute_sharded call. */
typedef struct xrt__sharded_call {
  xrt__sharded **args;
  xrt_sharding_spec *specs;
  xrt_shape *logical;
  xrt__spec_axes *axes;
  xrt_buffer **in, **out;          /* [n][num_args], [n][num_outputs] */
  xrt_buffer ***in_rows, ***out_rows; /* [n]: one row per device */
  xrt_device **devices;
} xrt__sharded_call;

static void xrt__call_free(xrt__client *c, xrt__sharded_call *k) {
  xrt__free(&c->allocator, k->args);
  xrt__free(&c->allocator, k->specs);
  xrt__free(&c->allocator, k->logical);
  xrt__free(&c->allocator, k->axes);
  xrt__free(&c->allocator, k->in);
  xrt__free(&c->allocator, k->out);
  xrt__free(&c->allocator, k->in_rows);
  xrt__free(&c->allocator, k->out_rows);
  xrt__free(&c->allocator, k->devices);
}

static xrt_status xrt__call_alloc(xrt__client *c, xrt__sharded_call *k, int n,
                                  int num_args, int num_outputs) {
  size_t na = (size_t)(num_args ? num_args : 1);
  size_t no = (size_t)(num_outputs ? num_outputs : 1);
  k->specs = (xrt_sharding_spec *)xrt__calloc(&c->allocator, no,
                                              sizeof *k->specs);
  k->logical = (xrt_shape *)xrt__calloc(&c->allocator, no, sizeof *k->logical);
  k->axes = (xrt__spec_axes *)xrt__calloc(&c->allocator, no, sizeof *k->axes);
  k->in = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n * na,
                                     sizeof *k->in);
  k->out = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n * no,
                                      sizeof *k->out);
  k->in_rows = (xrt_buffer ***)xrt__calloc(&c->allocator, (size_t)n,
                                           sizeof *k->in_rows);
  k->out_rows = (xrt_buffer ***)xrt__calloc(&c->allocator, (size_t)n,
                                            sizeof *k->out_rows);
  k->devices = (xrt_device **)xrt__calloc(&c->allocator, (size_t)n,
                                          sizeof *k->devices);
  if (!k->specs || !k->logical || !k->axes || !k->in || !k->out ||
      !k->in_rows || !k->out_rows || !k->devices)
    return xrt__nomem("a sharded execution's argument tables");
  return XRT_OK;
}

/* Launches the executable over the argument shards. */
static xrt_status xrt__sharded_launch(xrt_executable *exe,
                                      const xrt_execute_options *options,
                                      xrt__sharded_call *k, int n,
                                      int num_args, int num_outputs,
                                      xrt_event **out_done) {
  for (int d = 0; d < n; d++) {
    k->in_rows[d] = k->in + (size_t)d * (size_t)num_args;
    k->out_rows[d] = k->out + (size_t)d * (size_t)num_outputs;
    for (int i = 0; i < num_args; i++) k->in_rows[d][i] = k->args[i]->bufs[d];
  }
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  if (options) o = *options;
  o.devices = k->devices;
  if (xrt__executable_get(exe)->client->mp) /* 13a: the assignment's */
    o.devices = NULL;
  o.output_specs = NULL;
  return xrt_execute_multi(exe, (xrt_buffer *const *const *)k->in_rows, n,
                           num_args, k->out_rows, num_outputs, &o, out_done);
}

/* The devices of the launch: the arguments', which options->devices (if
 * given) must repeat; with no argument, options->devices or the
 * executable's assignment. */
static xrt_status xrt__launch_devices(xrt_executable *exe,
                                      const xrt_execute_options *o,
                                      xrt__sharded_call *k, int num_args,
                                      int n) {
  for (int d = 0; d < n; d++) {
    xrt_device *want = num_args ? k->args[0]->devices[d]
                       : o && o->devices ? o->devices[d]
                                         : xrt_executable_device(exe, d);
    if (num_args && o && o->devices && o->devices[d] != want)
      return xrt__fail(XRT_INVALID_ARGUMENT, "options->devices[%d] is device "
                       "%d, but the arguments' shard %d is on device %d", d,
                       xrt_device_global_id(o->devices[d]), d,
                       xrt_device_global_id(want));
    if (!want)
      return xrt__fail(XRT_INVALID_ARGUMENT, "no device for logical id %d", d);
    k->devices[d] = want;
  }
  return XRT_OK;
}

/* Checks the arguments and output specs of an xrt_execute_sharded call. */
static xrt_status xrt__sharded_prepare(xrt_executable *exe, xrt__client *c,
                                       xrt_sharded_array *const *args,
                                       int num_args, int num_outputs,
                                       const xrt_execute_options *o,
                                       xrt__sharded_call *k, int n) {
  xrt_status s = xrt__sharded_args(args, num_args, k->args);
  if (s) return s;
  if (num_args && k->args[0]->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "the arguments belong to another "
                     "client than the executable");
  if (num_args && k->args[0]->n != n)
    return xrt__fail(XRT_INVALID_ARGUMENT, "the arguments span %d devices, the "
                     "executable runs on %d (%d replica(s) x %d partition(s))",
                     k->args[0]->n, n, xrt_executable_num_replicas(exe),
                     xrt_executable_num_partitions(exe));
  if ((s = xrt__launch_devices(exe, o, k, num_args, n))) return s;
  if (c->mp && (s = xrt__mp_launch_check(
                    exe, (const xrt_device *const *)k->devices, n)))
    return s;
  for (int j = 0; j < num_outputs; j++)
    if ((s = xrt__output_spec(exe, o, j, n, &k->specs[j], &k->logical[j],
                              &k->axes[j])))
      return s;
  return XRT_OK;
}

/* Wraps the launch's per-device outputs as sharded arrays; on failure
 * every output buffer is released. */
static xrt_status xrt__sharded_wrap(xrt__client *c, xrt__sharded_call *k,
                                    int n, int num_outputs,
                                    xrt_sharded_array **outputs) {
  xrt_status s = XRT_OK;
  xrt_buffer **col = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n,
                                                sizeof *col);
  if (!col) s = xrt__nomem("a sharded execution's output column");
  int j = 0;
  for (; !s && j < num_outputs; j++) {
    for (int d = 0; d < n; d++)
      col[d] = k->out[(size_t)d * (size_t)num_outputs + (size_t)j];
    xrt__sharded *a;
    s = xrt__sharded_new(c, &k->logical[j], &k->specs[j], &k->axes[j], col, n,
                         &a);
    for (int d = 0; !s && d < n; d++) /* another process's pieces */
      if (!a->devices[d]) a->devices[d] = k->devices[d];
    if (!s) outputs[j] = (xrt_sharded_array *)a->handle;
  }
  xrt__free(&c->allocator, col);
  if (!s) return XRT_OK;
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  for (int i = 0; i < num_outputs; i++) {
    if (i < j - 1) {
      xrt_sharded_array_release(outputs[i]);
      outputs[i] = NULL;
      continue;
    }
    for (int d = 0; d < n; d++)
      xrt_buffer_release(k->out[(size_t)d * (size_t)num_outputs + (size_t)i]);
  }
  return xrt__restore_error(&err);
}

xrt_status xrt_execute_sharded(xrt_executable *executable,
                               xrt_sharded_array *const *args, int num_args,
                               xrt_sharded_array **outputs, int num_outputs,
                               const xrt_execute_options *options,
                               xrt_event **out_done) {
  if (out_done) *out_done = NULL;
  XRT__CHECK_ARG(outputs || num_outputs == 0, "outputs is NULL");
  XRT__CHECK_ARG(num_args >= 0 && num_outputs >= 0, "negative count");
  for (int j = 0; j < num_outputs; j++) outputs[j] = NULL;
  xrt__executable *e = xrt__executable_get(executable);
  XRT__CHECK_ARG(e, "invalid or released executable");
  int want_outputs = xrt_executable_num_outputs(executable);
  if (num_outputs != want_outputs)
    return xrt__fail(XRT_INVALID_ARGUMENT, "@%s returns %d result(s), room "
                     "for %d was given", xrt_executable_name(executable),
                     want_outputs, num_outputs);
  int n = xrt_executable_num_replicas(executable) *
          xrt_executable_num_partitions(executable);
  if (n < 1)
    return xrt__fail(XRT_INVALID_ARGUMENT, "executable runs on no device");
  xrt__client *c = e->client;
  xrt__sharded_call k;
  memset(&k, 0, sizeof k);
  k.args = (xrt__sharded **)xrt__calloc(
      &c->allocator, (size_t)(num_args ? num_args : 1), sizeof *k.args);
  xrt_status s = k.args ? xrt__call_alloc(c, &k, n, num_args, num_outputs)
                        : xrt__nomem("a sharded execution's arguments");
  if (!s) s = xrt__sharded_prepare(executable, c, args, num_args, num_outputs,
                                   options, &k, n);
  xrt_event *done = NULL;
  if (!s) s = xrt__sharded_launch(executable, options, &k, n, num_args,
                                  num_outputs, out_done ? &done : NULL);
  if (!s) s = xrt__sharded_wrap(c, &k, n, num_outputs, outputs);
  if (s && done) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_event_release(done);
    done = NULL;
    s = xrt__restore_error(&err);
  }
  xrt__call_free(c, &k);
  if (out_done) *out_done = done;
  return s;
}

/* ---- pmap: a compile cache keyed by argument signature ---- */

typedef enum xrt__pmap_state {
  XRT__PMAP_COMPILING = 0,
  XRT__PMAP_DONE,
  XRT__PMAP_FAILED
} xrt__pmap_state;

/* One signature: the arguments' piece shapes and the devices. */
typedef struct xrt__pmap_entry {
  int num_args, num_devices;
  xrt_shape *shapes;
  int *device_ids;
  xrt__pmap_state state;
  xrt_executable *exe;  /* when DONE */
  xrt__saved_error err; /* when FAILED */
} xrt__pmap_entry;

typedef struct xrt__pmap {
  uintptr_t handle;
  xrt_client *client;
  xrt_allocator allocator; /* a copy: the pmap may outlive the client */
  xrt_program *program;    /* fixed text, parsed once */
  xrt_pmap_source_fn source;
  void *source_user;
  xrt_compile_options compile;
  char *entry, *filename; /* owned copies of the compile option strings */
  pthread_mutex_t mu;     /* guards the entries and their states */
  pthread_cond_t cv;      /* signalled when a compilation ends */
  xrt__pmap_entry **entries;
  int num_entries, cap_entries;
} xrt__pmap;

static xrt__pmap *xrt__pmap_get(const xrt_pmap *p) {
  return (xrt__pmap *)xrt__hget(p, XRT__H_PMAP);
}

void xrt_pmap_options_init(xrt_pmap_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  xrt_compile_options_init(&o->compile);
}

static char *xrt__strdup_a(const xrt_allocator *a, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = (char *)xrt__alloc(a, n);
  if (d) memcpy(d, s, n);
  return d;
}

static void xrt__pmap_entry_free(xrt__pmap *p, xrt__pmap_entry *e) {
  if (e->exe) xrt_executable_release(e->exe);
  xrt__free(&p->allocator, e->shapes);
  xrt__free(&p->allocator, e->device_ids);
  xrt__free(&p->allocator, e);
}

static void xrt__pmap_free(xrt__pmap *p) {
  xrt__hfree_handle(p->handle);
  for (int i = 0; i < p->num_entries; i++)
    xrt__pmap_entry_free(p, p->entries[i]);
  xrt__free(&p->allocator, p->entries);
  xrt_program_release(p->program);
  xrt__free(&p->allocator, p->entry);
  xrt__free(&p->allocator, p->filename);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  xrt_allocator a = p->allocator;
  xrt__free(&a, p);
}

/* Copies the options into the pmap and parses fixed text. */
static xrt_status xrt__pmap_setup(xrt__pmap *p, const xrt_pmap_options *o) {
  p->source = o->source;
  p->source_user = o->source_user;
  p->compile = o->compile;
  p->entry = xrt__strdup_a(&p->allocator, o->compile.entry);
  p->filename = xrt__strdup_a(&p->allocator, o->compile.filename);
  if ((o->compile.entry && !p->entry) || (o->compile.filename && !p->filename))
    return xrt__nomem("a pmap's entry and file names");
  p->compile.entry = p->entry;
  p->compile.filename = p->filename;
  p->compile.device_assignment = NULL;
  if (o->source) return XRT_OK;
  return xrt_program_parse(o->text, o->len, &p->compile, &p->program);
}

xrt_status xrt_pmap_create(xrt_client *client, const xrt_pmap_options *options,
                           xrt_pmap **out_pmap) {
  XRT__CHECK_ARG(out_pmap, "out_pmap is NULL");
  *out_pmap = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(options, "options is NULL");
  XRT__CHECK_ARG(!options->text != !options->source,
                 "give either options->text or options->source, not both");
  xrt__pmap *p = (xrt__pmap *)xrt__calloc(&c->allocator, 1, sizeof *p);
  if (!p) return xrt__nomem("a pmap");
  p->client = client;
  p->allocator = c->allocator;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  xrt_status s = xrt__pmap_setup(p, options);
  if (!s && !(p->handle = xrt__hnew(p, XRT__H_PMAP)))
    s = xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt__pmap_free(p);
    return xrt__restore_error(&err);
  }
  *out_pmap = (xrt_pmap *)p->handle;
  return XRT_OK;
}

/* "(tensor<2xf32>, tensor<3xi32>)" into buf. */
static void xrt__format_shapes(const xrt_shape *s, int n, char *buf,
                               size_t cap) {
  size_t used = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < n && used < cap; i++) {
    if (i) used += (size_t)snprintf(buf + used, cap - used, ", ");
    if (used < cap) used += xrt_shape_format(&s[i], buf + used, cap - used);
  }
  if (used < cap) snprintf(buf + used, cap - used, ")");
}

static bool xrt__pmap_entry_matches(const xrt__pmap_entry *e,
                                    const xrt_shape *shapes, int num_args,
                                    const int *ids, int n) {
  if (e->num_args != num_args || e->num_devices != n) return false;
  for (int i = 0; i < num_args; i++)
    if (!xrt__shape_equal(&e->shapes[i], &shapes[i])) return false;
  return memcmp(e->device_ids, ids, (size_t)n * sizeof *ids) == 0;
}

/* A new entry in state COMPILING (under p->mu). */
static xrt_status xrt__pmap_entry_add(xrt__pmap *p, const xrt_shape *shapes,
                                      int num_args, const int *ids, int n,
                                      xrt__pmap_entry **out) {
  if (p->num_entries == p->cap_entries) {
    int cap = p->cap_entries ? 2 * p->cap_entries : 8;
    xrt__pmap_entry **ne = (xrt__pmap_entry **)xrt__calloc(
        &p->allocator, (size_t)cap, sizeof *ne);
    if (!ne) return xrt__nomem("a pmap's signature table");
    if (p->num_entries)
      memcpy(ne, p->entries, (size_t)p->num_entries * sizeof *ne);
    xrt__free(&p->allocator, p->entries);
    p->entries = ne;
    p->cap_entries = cap;
  }
  xrt__pmap_entry *e = (xrt__pmap_entry *)xrt__calloc(&p->allocator, 1,
                                                      sizeof *e);
  if (e) {
    e->shapes = (xrt_shape *)xrt__calloc(
        &p->allocator, (size_t)(num_args ? num_args : 1), sizeof *e->shapes);
    e->device_ids = (int *)xrt__calloc(&p->allocator, (size_t)n, sizeof(int));
  }
  if (!e || !e->shapes || !e->device_ids) {
    if (e) xrt__pmap_entry_free(p, e);
    return xrt__nomem("a pmap signature");
  }
  e->num_args = num_args;
  e->num_devices = n;
  if (num_args) memcpy(e->shapes, shapes, (size_t)num_args * sizeof *shapes);
  memcpy(e->device_ids, ids, (size_t)n * sizeof *ids);
  e->state = XRT__PMAP_COMPILING;
  p->entries[p->num_entries++] = e;
  *out = e;
  return XRT_OK;
}

/* Checks that the compiled entry takes exactly the signature's pieces. */
static xrt_status xrt__pmap_check_inputs(xrt_executable *exe,
                                         const xrt__pmap_entry *e) {
  int n = xrt_executable_num_inputs(exe);
  bool same = n == e->num_args;
  xrt_shape want[64];
  if (n > (int)XRT__ARRAY_SIZE(want)) n = (int)XRT__ARRAY_SIZE(want);
  for (int i = 0; i < n; i++) {
    xrt_executable_input_shape(exe, i, &want[i]);
    same = same && xrt__shape_equal(&want[i], &e->shapes[i]);
  }
  if (same) return XRT_OK;
  char have_s[1024], want_s[1024];
  xrt__format_shapes(e->shapes, e->num_args, have_s, sizeof have_s);
  xrt__format_shapes(want, n, want_s, sizeof want_s);
  return xrt__fail(XRT_INVALID_ARGUMENT, "pmap: the arguments' pieces %s do "
                   "not match the inputs %s of @%s", have_s, want_s,
                   xrt_executable_name(exe));
}

/* Compiles the program for one signature (no lock held). */
static xrt_status xrt__pmap_compile(xrt__pmap *p, xrt__pmap_entry *e,
                                    xrt_executable **out) {
  xrt_compile_options o = p->compile;
  o.num_replicas = e->num_devices;
  o.num_partitions = 1;
  o.device_assignment = e->device_ids;
  xrt_status s;
  if (p->program) {
    s = xrt_compile_program(p->client, p->program, &o, out);
  } else {
    char *text = NULL;
    size_t len = 0;
    s = p->source(p->source_user, e->shapes, e->num_args, &text, &len);
    if (s) {
      char sig[1024];
      xrt__format_shapes(e->shapes, e->num_args, sig, sizeof sig);
      free(text);
      return xrt__fail(s, "pmap: the source callback failed with %s for the "
                       "signature %s", xrt_strerror(s), sig);
    }
    s = xrt_compile(p->client, text, text ? len : 0, &o, out);
    free(text); /* malloc'd by the callback, as documented */
  }
  if (s) return s;
  if ((s = xrt__pmap_check_inputs(*out, e))) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_executable_release(*out);
    *out = NULL;
    return xrt__restore_error(&err);
  }
  return XRT_OK;
}

/* The executable of a signature: compiled by the first caller, waited for
 * by the others; a failure is remembered and returned to everyone. */
static xrt_status xrt__pmap_lookup(xrt__pmap *p, const xrt_shape *shapes,
                                   int num_args, const int *ids, int n,
                                   xrt_executable **out) {
  int64_t t0 = xrt__trace_begin();
  pthread_mutex_lock(&p->mu);
  xrt__pmap_entry *e = NULL;
  for (int i = 0; i < p->num_entries && !e; i++)
    if (xrt__pmap_entry_matches(p->entries[i], shapes, num_args, ids, n))
      e = p->entries[i];
  bool hit = e != NULL;
  if (!e) {
    xrt_status s = xrt__pmap_entry_add(p, shapes, num_args, ids, n, &e);
    pthread_mutex_unlock(&p->mu);
    if (s) return s;
    xrt_executable *exe = NULL;
    s = xrt__pmap_compile(p, e, &exe);
    pthread_mutex_lock(&p->mu);
    xrt__save_error(&e->err, s);
    e->exe = exe;
    e->state = s ? XRT__PMAP_FAILED : XRT__PMAP_DONE;
    pthread_cond_broadcast(&p->cv);
  } else {
    xrt__client *pc = xrt__client_get(p->client);
    if (pc) XRT__STAT(pc, CACHE_HITS, 1);
  }
  while (e->state == XRT__PMAP_COMPILING) pthread_cond_wait(&p->cv, &p->mu);
  xrt_executable *exe = e->exe;
  xrt__saved_error err = e->err;
  pthread_mutex_unlock(&p->mu);
  if (t0 && hit && exe)
    xrt__trace_cache_hit(xrt__client_get(p->client), "pmap",
                         xrt_executable_name(exe), t0);
  *out = exe;
  return xrt__restore_error(&err);
}

xrt_status xrt_pmap_call(xrt_pmap *pmap, xrt_sharded_array *const *args,
                         int num_args, xrt_sharded_array **outputs,
                         int num_outputs, const xrt_execute_options *options,
                         xrt_event **out_done) {
  if (out_done) *out_done = NULL;
  XRT__CHECK_ARG(outputs || num_outputs == 0, "outputs is NULL");
  for (int j = 0; j < num_outputs; j++) outputs[j] = NULL;
  xrt__pmap *p = xrt__pmap_get(pmap);
  XRT__CHECK_ARG(p, "invalid or released pmap");
  XRT__CHECK_ARG(xrt__client_get(p->client), "the pmap's client was released");
  XRT__CHECK_ARG(num_args >= 1 && num_args <= 64,
                 "pmap needs 1..64 arguments (they give its devices)");
  xrt__sharded *a[64];
  xrt_status s = xrt__sharded_args(args, num_args, a);
  if (s) return s;
  if (a[0]->client != xrt__client_get(p->client))
    return xrt__fail(XRT_INVALID_ARGUMENT, "the arguments belong to another "
                     "client than the pmap");
  xrt_shape shapes[64];
  for (int i = 0; i < num_args; i++) shapes[i] = a[i]->piece;
  int n = a[0]->n;
  int *ids = (int *)xrt__calloc(&p->allocator, (size_t)n, sizeof(int));
  if (!ids) return xrt__nomem("a pmap call's device list");
  for (int d = 0; d < n; d++) ids[d] = xrt_device_global_id(a[0]->devices[d]);
  xrt_executable *exe = NULL;
  s = xrt__pmap_lookup(p, shapes, num_args, ids, n, &exe);
  xrt__free(&p->allocator, ids);
  if (s) return s;
  return xrt_execute_sharded(exe, args, num_args, outputs, num_outputs,
                             options, out_done);
}

int xrt_pmap_num_compiled(const xrt_pmap *pmap) {
  xrt__pmap *p = xrt__pmap_get(pmap);
  if (!p) return -1;
  pthread_mutex_lock(&p->mu);
  int done = 0;
  for (int i = 0; i < p->num_entries; i++)
    done += p->entries[i]->state != XRT__PMAP_COMPILING;
  pthread_mutex_unlock(&p->mu);
  return done;
}

void xrt_pmap_release(xrt_pmap *pmap) {
  xrt__pmap *p = xrt__pmap_get(pmap);
  if (p) xrt__pmap_free(p);
}

/* Releasing a client releases everything still alive on it.  Queued work
 * finishes first; then nothing else runs, so objects are freed whatever
 * their counts. */
static void xrt__variables_release_all(xrt__client *c); /* variables.inc */
static void xrt__dlpack_client_gone(xrt__client *c);   /* section 15 */

static void xrt__client_free(xrt__client *c) {
  xrt__queues_stop(c);
  xrt__variables_release_all(c);
  xrt__sharded_release_all(c);
  while (c->executables.next != &c->executables) {
    xrt__executable *e = (xrt__executable *)c->executables.next;
    if (xrt__hget((const void *)e->handle, XRT__H_EXECUTABLE) == e)
      xrt__hkill(e->handle);
    xrt__executable_destroy(e);
  }
  while (c->free_exes.next != &c->free_exes) {
    xrt__executable *e = (xrt__executable *)(void *)c->free_exes.next;
    xrt__link_remove(&e->link);
    xrt__hfree_handle(e->handle);
    xrt__free(&c->allocator, e);
  }
  xrt__cache_free(c); /* 12b: before the plugin's client goes */
  xrt__dlpack_client_gone(c);
  /* Every buffer object, live or dead (see xrt__buffer_obj). */
  while (c->buffers.next != &c->buffers) {
    xrt__buffer *b = (xrt__buffer *)c->buffers.next;
    xrt__link_remove(&b->link);
    if (b->live && c->api->buffer_free)
      c->api->buffer_free(c->pc, b->device, b->mem);
    xrt__dlpack_freed(b);
    xrt__hfree_handle(b->handle); /* ready: freed below with every event */
    xrt__free(&c->allocator, b);
  }
  while (c->erefs.next != &c->erefs) {
    xrt__eref *r = (xrt__eref *)c->erefs.next;
    xrt__hfree_if_live(r->handle, XRT__H_EVENT, r);
    xrt__link_remove(&r->link);
    xrt__free(&c->allocator, r);
  }
  while (c->events.next != &c->events) {
    xrt__event *ev = (xrt__event *)c->events.next;
    xrt__link_remove(&ev->link);
    xrt__event_destroy(ev);
  }
  for (int i = 0; c->devices && i < c->num_devices; i++)
    xrt__hfree_handle(c->devices[i].handle);
  xrt__mp_free(c);
  if (c->pc && c->api->client_destroy) c->api->client_destroy(c->pc);
  xrt__trace_client_closed(c); /* 2b: frees its host services table */
  xrt__plugin_reg_unref(c->reg); /* after the plugin is done with it */
  for (int i = 0; i < c->num_hosts; i++)
    xrt__free(&c->allocator, c->hosts[i].target);
  xrt__free(&c->allocator, c->hosts);
  xrt__free(&c->allocator, c->devices);
  while (c->st_blks) { /* every counting thread is done */
    xrt__stats_blk *b = c->st_blks;
    c->st_blks = b->next;
    xrt__free(&c->allocator, b);
  }
  xrt__hfree_handle(c->handle);
  pthread_mutex_destroy(&c->mu);
  pthread_mutex_destroy(&c->ev_mu);
  pthread_mutex_destroy(&c->launch_mu);
  pthread_cond_destroy(&c->ev_cv);
  xrt_allocator a = c->allocator;
  xrt__free(&a, c);
}

void xrt_client_release(xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  if (c) xrt__client_free(c);
}

/* ======================================================================
 * 13c. Variables
 *
 *   - client stats and fault kinds (thin calls into the counters and the
 *     plugin);
 *   - region copies: a box of one buffer into a box of another, by the
 *     plugin's buffer_copy_region or, lacking it, through host memory;
 *   - the variable object: a handle kind of its own, a lock, owned piece
 *     buffers in mesh order and the format key (FNV-1a over the canonical
 *     fields of shape, spec and device ids, then a 64-bit finalizer: no
 *     extra header, so vendoring xrt.c needs nothing beyond libc);
 *   - reshard: validate, plan (keep, or copy boxes from old pieces), copy
 *     in parallel over destination devices, commit under every lock;
 *   - xrt_execute_variables over xrt_execute_sharded, with donation;
 *   - variables across processes ("Across processes" below: create, reshard,
 *     execute, save and load agreed between the processes);
 *   - .npy save and load (section 14's reader and writer).
 * ==================================================================== */


static xrt_status xrt__npy_read_host(const xrt_allocator *a, const char *path,
                                     const xrt_shape *want, xrt_shape *shape,
                                     void **data, size_t *bytes);
static xrt_status xrt__npy_write_host(const char *path, const xrt_shape *shape,
                                      const void *data, size_t bytes);

/* ---- client stats and fault kinds ---- */

xrt_status xrt_client_get_stats(const xrt_client *client,
                                xrt_client_stats *out) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(out, "out is NULL");
  memset(out, 0, sizeof *out);
  out->device_allocations = xrt__stat_sum(c, XRT__ST_ALLOCS);
  out->device_frees = xrt__stat_sum(c, XRT__ST_FREES);
  out->device_bytes_in_use = xrt__stat_sum(c, XRT__ST_BYTES_IN_USE);
  out->device_copies = xrt__stat_sum(c, XRT__ST_COPIES);
  out->device_bytes_copied = xrt__stat_sum(c, XRT__ST_BYTES_COPIED);
  out->host_to_device = xrt__stat_sum(c, XRT__ST_H2D);
  out->device_to_host = xrt__stat_sum(c, XRT__ST_D2H);
  out->executions = xrt__stat_sum(c, XRT__ST_EXECS);
  out->compiles = xrt__stat_sum(c, XRT__ST_COMPILES);
  out->compile_cache_hits = xrt__stat_sum(c, XRT__ST_CACHE_HITS);
  return XRT_OK;
}

xrt_status xrt_device_inject_fault_kind(xrt_device *device,
                                        xrt_fault_kind kind, int64_t after) {
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(kind >= XRT_FAULT_KERNEL && kind <= XRT_FAULT_ALLOC,
                 "unknown fault kind");
  xrt__client *c = d->client;
  if (!c->api->inject_fault_kind)
    return xrt__fail(XRT_UNIMPLEMENTED, "plugin '%s' cannot inject faults by "
                     "kind (device %d)", c->api->name, d->index);
  xrt_plugin_error err = {{0}};
  xrt_status s = c->api->inject_fault_kind(c->pc, d->index, (int)kind, after,
                                           &err);
  return s ? xrt__fail_plugin(s, c->api->name, &err) : XRT_OK;
}

/* ---- region copies ---- */

/* A box copy between two host arrays (the fallback's last step). */
static void xrt__region_host(const xrt_plugin_copy_region_args *a) {
  int r = a->rank;
  int64_t ss[XRT_MAX_RANK], ds[XRT_MAX_RANK], idx[XRT_MAX_RANK] = {0};
  int64_t st = (int64_t)a->elem_bytes, dt = st;
  for (int d = r - 1; d >= 0; d--) {
    if (a->extent[d] == 0) return;
    ss[d] = st;
    ds[d] = dt;
    st *= a->src_dims[d];
    dt *= a->dst_dims[d];
  }
  /* The innermost dimension is one memcpy. */
  size_t run = a->elem_bytes * (size_t)(r ? a->extent[r - 1] : 1);
  int outer = r ? r - 1 : 0;
  for (;;) {
    int64_t so = 0, dof = 0;
    for (int d = 0; d < r; d++) {
      int64_t i = (d < outer ? idx[d] : 0);
      so += (a->src_start[d] + i) * ss[d];
      dof += (a->dst_start[d] + i) * ds[d];
    }
    memcpy((char *)a->dst + dof, (const char *)a->src + so, run);
    int d = outer - 1;
    while (d >= 0 && ++idx[d] == a->extent[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/* The region copy of a plugin without buffer_copy_region: through host
 * pointers when the plugin gives them, else by staging both whole
 * buffers in host memory (reads, host copy, write back). */
static xrt_status xrt__region_fallback(xrt__client *c, xrt__buffer *src,
                                       xrt__buffer *dst,
                                       xrt_plugin_copy_region_args *a) {
  const xrt_plugin_api *api = c->api;
  void *sp = api->buffer_host_pointer
                 ? api->buffer_host_pointer(c->pc, src->device, src->mem)
                 : NULL;
  void *dp = api->buffer_host_pointer
                 ? api->buffer_host_pointer(c->pc, dst->device, dst->mem)
                 : NULL;
  if (sp && dp) {
    a->src = sp;
    a->dst = dp;
    xrt__region_host(a);
    return XRT_OK;
  }
  void *hs = xrt__alloc(&c->allocator, src->bytes ? src->bytes : 1);
  void *hd = xrt__alloc(&c->allocator, dst->bytes ? dst->bytes : 1);
  xrt_plugin_error err = {{0}};
  xrt_status s = hs && hd ? XRT_OK
                          : xrt__nomem("staging a region copy");
  if (!s && (s = api->buffer_read(c->pc, src->device, src->mem, hs,
                                  src->bytes, &err)))
    xrt__fail_plugin(s, api->name, &err);
  if (!s && (s = api->buffer_read(c->pc, dst->device, dst->mem, hd,
                                  dst->bytes, &err)))
    xrt__fail_plugin(s, api->name, &err);
  if (!s) {
    a->src = hs;
    a->dst = hd;
    xrt__region_host(a);
    if ((s = api->buffer_write(c->pc, dst->device, dst->mem, hd, dst->bytes,
                               &err)))
      xrt__fail_plugin(s, api->name, &err);
  }
  xrt__free(&c->allocator, hs);
  xrt__free(&c->allocator, hd);
  return s;
}

/* Copies the box ext at src_start of src (both in the dims src_dims) to
 * dst_start of dst (dims dst_dims); both buffers ready and owned by the
 * caller.  Ranks may be 0 (one element). */
static xrt_status xrt__region_copy(xrt__client *c, xrt__buffer *src,
                                   xrt__buffer *dst, int rank,
                                   const int64_t *src_dims,
                                   const int64_t *src_start,
                                   const int64_t *dst_dims,
                                   const int64_t *dst_start,
                                   const int64_t *ext) {
  xrt_plugin_copy_region_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.src_device = src->device;
  a.src = src->mem;
  a.src_dims = src_dims;
  a.src_start = src_start;
  a.dst_device = dst->device;
  a.dst = dst->mem;
  a.dst_dims = dst_dims;
  a.dst_start = dst_start;
  a.extent = ext;
  a.rank = rank;
  a.elem_bytes = xrt_dtype_size(src->shape.dtype);
  uint64_t bytes = a.elem_bytes;
  for (int d = 0; d < rank; d++) bytes *= (uint64_t)ext[d];
  XRT__STAT(c, COPIES, 1);
  XRT__STAT(c, BYTES_COPIED, bytes);
  if (!c->api->buffer_copy_region) return xrt__region_fallback(c, src, dst, &a);
  xrt_plugin_error err = {{0}};
  xrt_status s = c->api->buffer_copy_region(c->pc, &a, &err);
  return s ? xrt__fail_plugin(s, c->api->name, &err) : XRT_OK;
}

/* Releases a variable's piece once the handle holds its only reference:
 * queued work that used it (uploads, reads, executions, all complete by
 * then) lets go of it just after completing, and waiting for that frees
 * the device memory now, which the staged reshard and the callers'
 * next allocations count on. */
static void xrt__piece_release(xrt_buffer *h) {
  xrt__buffer *b = (xrt__buffer *)xrt__hget(h, XRT__H_BUFFER);
  while (b && atomic_load(&b->refs) > 1) xrt__os_sleep_ns(20000);
  xrt_buffer_release(h);
}

/* ---- the variable object ---- */

typedef struct xrt__var {
  xrt__link link; /* first: the list of live variables */
  xrt__client *client;
  xrt_allocator al; /* the client's: frees the variable, even after it */
  uintptr_t handle;
  int refs;       /* under xrt__vars_mu: the handle's, and each user's */
  pthread_mutex_t mu; /* the variable's lock (executes, reshards, reads) */
  bool dead;      /* released: pieces gone */
  char *name;
  xrt_shape logical, piece;
  xrt_sharding_spec spec;
  xrt__spec_axes axes;
  int n;
  xrt_buffer **bufs;    /* owned, in mesh order */
  xrt_device **devices;
  uint64_t key;
} xrt__var;

static xrt__link xrt__vars_live = {&xrt__vars_live, &xrt__vars_live};
static pthread_mutex_t xrt__vars_mu = PTHREAD_MUTEX_INITIALIZER;

/* Takes a reference to a live variable (NULL if the handle is not). */
static xrt__var *xrt__var_acquire(const xrt_variable *h) {
  pthread_mutex_lock(&xrt__vars_mu);
  xrt__var *v = (xrt__var *)xrt__hget(h, XRT__H_VARIABLE);
  if (v) v->refs++;
  pthread_mutex_unlock(&xrt__vars_mu);
  return v;
}

static void xrt__var_drop_pieces(xrt__var *v) {
  for (int k = 0; k < v->n; k++) xrt_buffer_release(v->bufs[k]);
  xrt__free(&v->al, v->bufs);
  xrt__free(&v->al, v->devices);
  v->bufs = NULL;
  v->devices = NULL;
  v->n = 0;
}

static void xrt__var_unref(xrt__var *v) {
  if (!v) return;
  pthread_mutex_lock(&xrt__vars_mu);
  bool last = --v->refs == 0;
  if (last) xrt__link_remove(&v->link);
  pthread_mutex_unlock(&xrt__vars_mu);
  if (!last) return;
  xrt__var_drop_pieces(v);
  pthread_mutex_destroy(&v->mu);
  xrt_allocator al = v->al;
  xrt__free(&al, v->name);
  xrt__free(&al, v);
}

/* Called by xrt__client_free: the client's variables die with it. */
static void xrt__variables_release_all(xrt__client *c) {
  for (;;) {
    xrt__var *found = NULL;
    pthread_mutex_lock(&xrt__vars_mu);
    for (xrt__link *l = xrt__vars_live.next; l != &xrt__vars_live;
         l = l->next)
      if (((xrt__var *)l)->client == c && !((xrt__var *)l)->dead) {
        found = (xrt__var *)l;
        found->dead = true;
        xrt__hfree_if_live(found->handle, XRT__H_VARIABLE, found);
        break;
      }
    pthread_mutex_unlock(&xrt__vars_mu);
    if (!found) return;
    pthread_mutex_lock(&found->mu);
    xrt__var_drop_pieces(found);
    pthread_mutex_unlock(&found->mu);
    xrt__var_unref(found); /* the handle's reference */
  }
}

/* FNV-1a over 64-bit words, then splitmix64's finalizer. */
static uint64_t xrt__key_mix(uint64_t h, uint64_t x) {
  return (h ^ x) * 0x100000001b3ull;
}

static uint64_t xrt__format_key(const xrt_shape *logical,
                                const xrt_sharding_spec *spec,
                                xrt_device *const *devs, int n) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = xrt__key_mix(h, (uint64_t)logical->dtype);
  h = xrt__key_mix(h, (uint64_t)logical->rank);
  for (int d = 0; d < logical->rank; d++)
    h = xrt__key_mix(h, (uint64_t)logical->dims[d]);
  h = xrt__key_mix(h, (uint64_t)spec->rank);
  for (int d = 0; d < spec->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    h = xrt__key_mix(h, (uint64_t)ds->kind);
    if (ds->kind == XRT_DIM_UNSTACKED) h = xrt__key_mix(h, (uint64_t)ds->size);
    if (ds->kind != XRT_DIM_CHUNKED) continue;
    h = xrt__key_mix(h, (uint64_t)ds->num_chunks);
    for (int i = 0; i < ds->num_chunks; i++)
      h = xrt__key_mix(h, (uint64_t)ds->chunks[i]);
  }
  h = xrt__key_mix(h, (uint64_t)spec->num_mesh_dims);
  for (int i = 0; i < spec->num_mesh_dims; i++) {
    const xrt_mesh_mapping *m = &spec->mesh[i];
    h = xrt__key_mix(h, (uint64_t)m->kind);
    h = xrt__key_mix(h, m->kind == XRT_MESH_REPLICATED ? (uint64_t)m->replicas
                                                       : (uint64_t)m->axis);
  }
  h = xrt__key_mix(h, (uint64_t)n);
  for (int k = 0; k < n; k++)
    h = xrt__key_mix(h, (uint64_t)xrt_device_global_id(devs[k]));
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h ? h : 1; /* 0 means invalid */
}

/* A checked target format. */
typedef struct xrt__vformat {
  xrt_sharding_spec spec;
  xrt__spec_axes axes;
  xrt_shape piece;
  int n;
  xrt_device *const *devices; /* borrowed from the caller */
  uint64_t key;
} xrt__vformat;

/* Checks a format for a logical shape: the spec, then n distinct devices
 * of client c (any client when c is NULL). */
static xrt_status xrt__vformat_check(xrt__client *c, const xrt_shape *logical,
                                     const xrt_variable_format *f,
                                     xrt__vformat *out) {
  XRT__CHECK_ARG(f, "format is NULL");
  int64_t n;
  xrt_status s = xrt__spec_check(f->spec, logical, &out->axes, &n);
  if (s) return s;
  if (n != f->num_devices)
    return xrt__fail(XRT_INVALID_ARGUMENT, "the sharding spec spans %" PRId64
                     " devices, the format lists %d", n, f->num_devices);
  XRT__CHECK_ARG(f->devices, "format devices is NULL");
  for (int k = 0; k < f->num_devices; k++) {
    /* Another process's device (a global device) is one of c's too. */
    xrt__device *d = xrt__device_get(f->devices[k]);
    xrt__rdev *r = d ? NULL : xrt__rdev_get(f->devices[k]);
    xrt__client *dc = d ? d->client : r ? r->client : NULL;
    if (!dc || (c && dc != c))
      return xrt__fail(XRT_INVALID_ARGUMENT, "format devices[%d] is not a "
                       "device of the variable's client", k);
    if (!c) c = dc;
    for (int j = 0; j < k; j++)
      if (f->devices[j] == f->devices[k])
        return xrt__fail(XRT_INVALID_ARGUMENT, "format devices[%d] and "
                         "devices[%d] are the same device (%d): a variable "
                         "needs distinct devices", j, k,
                         xrt_device_global_id(f->devices[k]));
  }
  out->spec = *f->spec;
  out->piece = xrt__spec_piece_shape(f->spec, logical);
  out->n = f->num_devices;
  out->devices = f->devices;
  out->key = xrt__format_key(logical, f->spec, f->devices, f->num_devices);
  return XRT_OK;
}

uint64_t xrt_variable_format_key_of(const xrt_shape *logical,
                                    const xrt_variable_format *format) {
  xrt__vformat vf;
  size_t bytes;
  if (!logical || xrt__shape_check(logical, &bytes)) return 0;
  return xrt__vformat_check(NULL, logical, format, &vf) ? 0 : vf.key;
}

/* A new variable over the pieces bufs[0..n) (taken over on success). */
static xrt_status xrt__var_new(xrt__client *c, const char *name,
                               const xrt_shape *logical, const xrt__vformat *f,
                               xrt_buffer *const *bufs, xrt__var **out) {
  const xrt_allocator *a = &c->allocator;
  xrt__var *v = (xrt__var *)xrt__calloc(a, 1, sizeof *v);
  if (v) {
    v->al = *a;
    v->name = xrt__strdup_with(a, name ? name : "");
    v->bufs = (xrt_buffer **)xrt__calloc(a, (size_t)f->n, sizeof *v->bufs);
    v->devices = (xrt_device **)xrt__calloc(a, (size_t)f->n,
                                            sizeof *v->devices);
  }
  if (!v || !v->name || !v->bufs || !v->devices) {
    if (v) {
      xrt__free(a, v->name);
      xrt__free(a, v->bufs);
      xrt__free(a, v->devices);
    }
    xrt__free(a, v);
    return xrt__nomem("a variable");
  }
  pthread_mutex_init(&v->mu, NULL);
  v->client = c;
  v->refs = 1;
  v->logical = *logical;
  v->piece = f->piece;
  v->spec = f->spec;
  v->axes = f->axes;
  v->n = f->n;
  v->key = f->key;
  for (int k = 0; k < f->n; k++) {
    v->bufs[k] = bufs[k];
    v->devices[k] = f->devices[k];
  }
  pthread_mutex_lock(&xrt__vars_mu);
  v->handle = xrt__hnew(v, XRT__H_VARIABLE);
  if (v->handle) xrt__link_add(&xrt__vars_live, &v->link);
  pthread_mutex_unlock(&xrt__vars_mu);
  if (!v->handle) {
    v->n = 0; /* the caller keeps the pieces */
    xrt__free(a, v->bufs);
    xrt__free(a, v->devices);
    xrt__free(a, v->name);
    pthread_mutex_destroy(&v->mu);
    xrt__free(a, v);
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of handles");
  }
  *out = v;
  return XRT_OK;
}

/* Takes over a sharded array's pieces: its devices must be distinct. */
static xrt_status xrt__var_adopt(const char *name, xrt__sharded *a,
                                 xrt__var **out) {
  xrt_variable_format f = {&a->spec, a->devices, a->n};
  xrt__vformat vf;
  xrt_status s = xrt__vformat_check(a->client, &a->logical, &f, &vf);
  if (s) return s;
  if ((s = xrt__var_new(a->client, name, &a->logical, &vf, a->bufs, out)))
    return s;
  xrt__sharded_free(a, false);
  return XRT_OK;
}

/* Across processes (below). */
static xrt_status xrt__mpv_create(xrt__client *c, const char *name,
                                  const xrt_shape *logical, const void *data,
                                  const xrt__vformat *f,
                                  xrt_variable **out_variable);

xrt_status xrt_variable_create(xrt_client *client, const char *name,
                               const xrt_shape *logical, const void *data,
                               const xrt_variable_format *format,
                               xrt_variable **out_variable) {
  XRT__CHECK_ARG(out_variable, "out_variable is NULL");
  *out_variable = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(logical, "logical shape is NULL");
  size_t bytes;
  xrt_status s = xrt__shape_check(logical, &bytes);
  xrt__vformat vf;
  if (s || (s = xrt__vformat_check(c, logical, format, &vf))) return s;
  if (c->mp) /* across processes */
    return xrt__mpv_create(c, name, logical, data, &vf, out_variable);
  xrt_sharded_array *arr;
  if ((s = xrt_sharded_array_from_host(client, logical, data, &vf.spec,
                                       format->devices, vf.n, &arr)))
    return s;
  xrt__var *v;
  if ((s = xrt__var_adopt(name, xrt__sharded_get(arr), &v))) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_sharded_array_release(arr);
    return xrt__restore_error(&err);
  }
  *out_variable = (xrt_variable *)v->handle;
  return XRT_OK;
}

xrt_status xrt_variable_from_array(const char *name, xrt_sharded_array *array,
                                   xrt_variable **out_variable) {
  XRT__CHECK_ARG(out_variable, "out_variable is NULL");
  *out_variable = NULL;
  xrt__sharded *a = xrt__sharded_get(array);
  XRT__CHECK_ARG(a, "invalid or released sharded array");
  xrt__var *v;
  xrt_status s = xrt__var_adopt(name, a, &v);
  if (s) return s;
  *out_variable = (xrt_variable *)v->handle;
  return XRT_OK;
}

xrt_status xrt_variable_release(xrt_variable *variable) {
  if (!variable) return XRT_OK;
  pthread_mutex_lock(&xrt__vars_mu);
  xrt__var *v = (xrt__var *)xrt__hget(variable, XRT__H_VARIABLE);
  if (v) {
    xrt__hfree_handle(v->handle);
    v->refs++;
  }
  pthread_mutex_unlock(&xrt__vars_mu);
  XRT__CHECK_ARG(v, "invalid or already released variable");
  pthread_mutex_lock(&v->mu); /* after any execute or reshard of it */
  v->dead = true;
  xrt__var_drop_pieces(v);
  pthread_mutex_unlock(&v->mu);
  xrt__var_unref(v); /* the handle's */
  xrt__var_unref(v);
  return XRT_OK;
}

/* Acquires and locks a live variable; on failure nothing is held. */
static xrt_status xrt__var_open(const xrt_variable *h, const char *fn,
                                xrt__var **out) {
  xrt__var *v = xrt__var_acquire(h);
  if (!v)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: invalid or released "
                     "variable", fn);
  pthread_mutex_lock(&v->mu);
  if (v->dead) {
    pthread_mutex_unlock(&v->mu);
    xrt__var_unref(v);
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: released variable", fn);
  }
  *out = v;
  return XRT_OK;
}

static void xrt__var_close(xrt__var *v) {
  pthread_mutex_unlock(&v->mu);
  xrt__var_unref(v);
}

const char *xrt_variable_name(const xrt_variable *variable) {
  xrt__var *v = (xrt__var *)xrt__hget(variable, XRT__H_VARIABLE);
  return v ? v->name : NULL;
}

xrt_status xrt_variable_shape(const xrt_variable *variable, xrt_shape *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  *out = v->logical;
  xrt__var_close(v);
  return XRT_OK;
}

xrt_status xrt_variable_spec(const xrt_variable *variable,
                             xrt_sharding_spec *out) {
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  *out = v->spec;
  xrt__var_close(v);
  return XRT_OK;
}

int xrt_variable_num_devices(const xrt_variable *variable) {
  xrt__var *v;
  if (xrt__var_open(variable, __func__, &v)) return -1;
  int n = v->n;
  xrt__var_close(v);
  return n;
}

xrt_device *xrt_variable_device(const xrt_variable *variable, int index) {
  xrt__var *v;
  if (xrt__var_open(variable, __func__, &v)) return NULL;
  xrt_device *d = index >= 0 && index < v->n ? v->devices[index] : NULL;
  if (!d)
    xrt__fail(XRT_OUT_OF_RANGE, "device index %d is outside 0..%d", index,
              v->n - 1);
  xrt__var_close(v);
  return d;
}

uint64_t xrt_variable_format_key(const xrt_variable *variable) {
  xrt__var *v;
  if (xrt__var_open(variable, __func__, &v)) return 0;
  uint64_t key = v->key;
  xrt__var_close(v);
  return key;
}

/* A sharded-array view of a locked variable's pieces (freed with
 * xrt__sharded_free(view, false): the pieces stay the variable's). */
static xrt_status xrt__var_view(xrt__var *v, xrt__sharded **out) {
  return xrt__sharded_new(v->client, &v->logical, &v->spec, &v->axes, v->bufs,
                          v->n, out);
}

/* Reads a locked variable's logical array. */
static xrt_status xrt__var_read(xrt__var *v, void *dst, size_t dst_bytes) {
  if (v->client->mp) /* collective: 13b's xrt__mp_to_host */
    return xrt__mp_to_host(v->client, &v->logical, &v->spec, &v->axes, v->n,
                           v->bufs, v->devices, dst, dst_bytes);
  xrt__sharded *view;
  xrt_status s = xrt__var_view(v, &view);
  if (s) return s;
  s = xrt_sharded_array_to_host((xrt_sharded_array *)view->handle, dst,
                                dst_bytes);
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  xrt__sharded_free(view, false);
  return xrt__restore_error(&err);
}

xrt_status xrt_variable_to_host(xrt_variable *variable, void *dst,
                                size_t dst_bytes) {
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  s = xrt__var_read(v, dst, dst_bytes);
  xrt__var_close(v);
  return s;
}

/* Locks distinct variables in handle order (no deadlock between calls). */
static int xrt__var_cmp(const void *a, const void *b) {
  uintptr_t x = (*(xrt__var *const *)a)->handle;
  uintptr_t y = (*(xrt__var *const *)b)->handle;
  return x < y ? -1 : x > y;
}

static void xrt__vars_lock(xrt__var **sorted, int n) {
  qsort(sorted, (size_t)n, sizeof *sorted, xrt__var_cmp);
  for (int i = 0; i < n; i++) pthread_mutex_lock(&sorted[i]->mu);
}

static void xrt__vars_unlock(xrt__var **sorted, int n) {
  for (int i = n - 1; i >= 0; i--) pthread_mutex_unlock(&sorted[i]->mu);
}


/* ---- reshard ----
 *
 * Plan, per variable: each new piece is either an old piece kept in place
 * (same device, same box, same shape: moved, not copied) or a new buffer
 * filled by box copies from the old pieces that overlap it, each read from
 * a replica on the same device when there is one, else from replicas
 * spread by destination.  Copies run in parallel over destination pieces
 * (plugin region copies, issued directly: every piece involved is owned by
 * a locked variable and waited ready first).  The commit swaps the piece
 * arrays under the locks of all the variables, so it cannot fail.
 *
 * Memory rule.  First every new piece is allocated while the old ones
 * live; a failure of any step then frees the new pieces and leaves every
 * variable as it was.  When an allocation fails with RESOURCE_EXHAUSTED,
 * the staged plan runs instead: every variable's logical array is first
 * copied to host memory (no host memory: RESOURCE_EXHAUSTED, nothing
 * changed); only then are the old pieces that the commit would drop
 * anyway freed, and the new pieces allocated and filled from the host
 * copy.  If that fails, the new pieces are freed and the old ones rebuilt
 * from the host copy into the memory just freed, so the variables end in
 * their old format with their data (RESOURCE_EXHAUSTED or the fault is
 * returned).  Only if that rebuild itself fails (another thread took the
 * memory meanwhile, or a fault hits the re-upload) is XRT_DATA_LOSS
 * returned, naming the variable. */

typedef struct xrt__rs_copy {
  int src; /* old piece index */
  int64_t src_start[XRT_MAX_RANK], dst_start[XRT_MAX_RANK];
  int64_t ext[XRT_MAX_RANK];
} xrt__rs_copy;

typedef struct xrt__rs_piece {
  int keep;        /* the old piece kept in place, or -1 */
  xrt_buffer *buf; /* the new piece until the commit (NULL when kept) */
  int ncopies;
  xrt__rs_copy *copies;
} xrt__rs_piece;

typedef struct xrt__rs_var {
  xrt__var *v;
  xrt__vformat f;
  bool noop;
  int64_t old_ext[XRT_MAX_RANK], new_ext[XRT_MAX_RANK];
  xrt__rs_piece *pieces; /* [f.n] */
  bool *kept;            /* [v->n]: old pieces moved into the new format */
  xrt_buffer **new_bufs; /* [f.n], made before the commit (which cannot
                            fail) */
  xrt_device **new_devs;
} xrt__rs_var;

static void xrt__rs_var_free(xrt__rs_var *r) {
  const xrt_allocator *a = &r->v->al;
  for (int k = 0; r->pieces && k < r->f.n; k++) {
    if (r->pieces[k].buf) xrt_buffer_release(r->pieces[k].buf);
    xrt__free(a, r->pieces[k].copies);
  }
  xrt__free(a, r->pieces);
  xrt__free(a, r->kept);
  xrt__free(a, r->new_bufs);
  xrt__free(a, r->new_devs);
  r->pieces = NULL;
  r->kept = NULL;
  r->new_bufs = NULL;
  r->new_devs = NULL;
}

/* The replica of old piece id to read for the new piece k on device dev:
 * one on dev if any, else the (k mod count)-th. */
static int xrt__rs_source(const xrt__var *v, const int64_t *old_piece,
                          int64_t id, xrt_device *dev, int k) {
  int count = 0, pick = -1;
  for (int j = 0; j < v->n; j++) {
    if (old_piece[j] != id) continue;
    if (v->devices[j] == dev) return j;
    count++;
  }
  int want = k % (count ? count : 1);
  for (int j = 0; j < v->n && pick < 0; j++)
    if (old_piece[j] == id && v->devices[j] != dev && want-- == 0) pick = j;
  return pick;
}

/* The box copies that fill new piece k (starting at ns) from the old
 * pieces (old_start/old_piece per old index; reps: one index per distinct
 * old piece). */
static xrt_status xrt__rs_plan_copies(xrt__rs_var *r, int k,
                                      const int64_t *ns,
                                      const int64_t *old_start,
                                      const int64_t *old_piece,
                                      const int *reps, int nreps) {
  xrt__var *v = r->v;
  int L = v->logical.rank;
  xrt__rs_piece *p = &r->pieces[k];
  p->copies = (xrt__rs_copy *)xrt__calloc(&v->al, (size_t)(nreps ? nreps : 1),
                                          sizeof *p->copies);
  if (!p->copies) return xrt__nomem("a reshard's copy plan");
  for (int j = 0; j < nreps; j++) {
    const int64_t *os = old_start + (size_t)reps[j] * XRT_MAX_RANK;
    xrt__rs_copy cp;
    bool empty = false;
    for (int d = 0; d < L && !empty; d++) {
      int64_t lo = os[d] > ns[d] ? os[d] : ns[d];
      int64_t ohi = os[d] + r->old_ext[d], nhi = ns[d] + r->new_ext[d];
      int64_t hi = ohi < nhi ? ohi : nhi;
      empty = lo >= hi;
      cp.src_start[d] = lo - os[d];
      cp.dst_start[d] = lo - ns[d];
      cp.ext[d] = hi - lo;
    }
    if (empty) continue;
    cp.src = xrt__rs_source(v, old_piece, old_piece[reps[j]],
                            r->f.devices[k], k);
    p->copies[p->ncopies++] = cp;
  }
  return XRT_OK;
}

/* Plans one variable's move (see the comment above). */
static xrt_status xrt__rs_plan(xrt__rs_var *r) {
  xrt__var *v = r->v;
  int on = v->n, nn = r->f.n, L = v->logical.rank;
  const xrt_allocator *a = &v->al;
  int64_t *old_start = (int64_t *)xrt__calloc(a, (size_t)on * XRT_MAX_RANK,
                                              sizeof(int64_t));
  int64_t *old_piece = (int64_t *)xrt__calloc(a, (size_t)on, sizeof(int64_t));
  int *reps = (int *)xrt__calloc(a, (size_t)on, sizeof(int));
  r->pieces = (xrt__rs_piece *)xrt__calloc(a, (size_t)nn, sizeof *r->pieces);
  r->kept = (bool *)xrt__calloc(a, (size_t)on, sizeof(bool));
  r->new_bufs = (xrt_buffer **)xrt__calloc(a, (size_t)nn, sizeof *r->new_bufs);
  r->new_devs = (xrt_device **)xrt__calloc(a, (size_t)nn, sizeof *r->new_devs);
  xrt_status s = XRT_OK;
  if (!old_start || !old_piece || !reps || !r->pieces || !r->kept ||
      !r->new_bufs || !r->new_devs)
    s = xrt__nomem("a reshard plan");
  int nreps = 0;
  for (int k = 0; !s && k < on; k++) {
    xrt__spec_locate(&v->spec, &v->axes, &v->logical, k,
                     old_start + (size_t)k * XRT_MAX_RANK, &old_piece[k]);
    bool seen = false;
    for (int j = 0; j < nreps && !seen; j++)
      seen = old_piece[reps[j]] == old_piece[k];
    if (!seen) reps[nreps++] = k;
  }
  xrt__spec_extent(&v->spec, &v->logical, r->old_ext);
  xrt__spec_extent(&r->f.spec, &v->logical, r->new_ext);
  bool same_ext = xrt__shape_equal(&v->piece, &r->f.piece);
  for (int d = 0; d < L; d++) same_ext = same_ext && r->old_ext[d] == r->new_ext[d];
  for (int k = 0; !s && k < nn; k++) {
    int64_t ns[XRT_MAX_RANK], id;
    xrt__spec_locate(&r->f.spec, &r->f.axes, &v->logical, k, ns, &id);
    xrt__rs_piece *p = &r->pieces[k];
    p->keep = -1;
    for (int j = 0; same_ext && j < on && p->keep < 0; j++)
      if (!r->kept[j] && v->devices[j] == r->f.devices[k] &&
          memcmp(old_start + (size_t)j * XRT_MAX_RANK, ns,
                 (size_t)L * sizeof(int64_t)) == 0)
        p->keep = j;
    if (p->keep >= 0) r->kept[p->keep] = true;
    else s = xrt__rs_plan_copies(r, k, ns, old_start, old_piece, reps, nreps);
  }
  xrt__free(a, old_start);
  xrt__free(a, old_piece);
  xrt__free(a, reps);
  return s;
}

/* Waits until every piece of a locked variable held here is computed
 * (pieces on other processes, NULL, are theirs to wait for). */
static xrt_status xrt__var_wait_ready(xrt__var *v) {
  for (int k = 0; k < v->n; k++) {
    if (!v->bufs[k]) continue;
    xrt__buffer *b = (xrt__buffer *)xrt__hget(v->bufs[k], XRT__H_BUFFER);
    if (!b) return xrt__fail(XRT_INTERNAL, "variable '%s': piece %d is gone",
                             v->name, k);
    xrt_status s = b->ready ? xrt__event_wait(b->ready) : XRT_OK;
    if (s)
      return xrt__fail(s, "variable '%s': piece %d failed: %s", v->name, k,
                       b->ready->message);
  }
  return XRT_OK;
}

/* Allocates every new piece of the call (old ones still alive). */
static xrt_status xrt__rs_alloc(xrt__rs_var *rs, int nv) {
  for (int i = 0; i < nv; i++) {
    xrt__rs_var *r = &rs[i];
    if (r->noop) continue;
    xrt__client *c = r->v->client;
    size_t bytes = xrt_shape_bytes(&r->f.piece);
    for (int k = 0; k < r->f.n; k++) {
      if (r->pieces[k].keep >= 0) continue;
      xrt__buffer *b;
      xrt_status s = xrt__buffer_new(c, xrt_device_id(r->f.devices[k]),
                                     &r->f.piece, bytes, NULL, &b);
      if (s) return s;
      r->pieces[k].buf = (xrt_buffer *)b->handle;
    }
  }
  return XRT_OK;
}

static void xrt__rs_free_new(xrt__rs_var *rs, int nv) {
  for (int i = 0; i < nv; i++)
    for (int k = 0; rs[i].pieces && k < rs[i].f.n; k++)
      if (rs[i].pieces[k].buf) {
        xrt__piece_release(rs[i].pieces[k].buf);
        rs[i].pieces[k].buf = NULL;
      }
}

/* Parallel copies: one task per new piece, claimed by the workers. */
typedef struct xrt__rs_task {
  xrt__rs_var *r;
  int k;
} xrt__rs_task;

typedef struct xrt__rs_exec {
  xrt__rs_task *tasks;
  int ntasks;
  _Atomic int next;
  _Atomic bool failed;
  pthread_mutex_t mu; /* guards err */
  xrt__saved_error err;
} xrt__rs_exec;

static xrt_status xrt__rs_run_task(const xrt__rs_task *t) {
  xrt__rs_var *r = t->r;
  xrt__rs_piece *p = &r->pieces[t->k];
  xrt__client *c = r->v->client;
  xrt__buffer *dst = (xrt__buffer *)xrt__hget(p->buf, XRT__H_BUFFER);
  for (int j = 0; j < p->ncopies; j++) {
    const xrt__rs_copy *cp = &p->copies[j];
    xrt__buffer *src = (xrt__buffer *)xrt__hget(r->v->bufs[cp->src],
                                                XRT__H_BUFFER);
    xrt_status s = xrt__region_copy(c, src, dst, r->v->logical.rank,
                                    r->old_ext, cp->src_start, r->new_ext,
                                    cp->dst_start, cp->ext);
    if (s) {
      xrt__saved_error err = {XRT_OK, ""};
      xrt__save_error(&err, s);
      return xrt__fail(s, "variable '%s': copying to its new piece %d on "
                       "device %d: %s", r->v->name, t->k, dst->device,
                       err.message);
    }
  }
  return XRT_OK;
}

static void *xrt__rs_worker(void *arg) {
  xrt__rs_exec *x = (xrt__rs_exec *)arg;
  while (!atomic_load(&x->failed)) {
    int t = atomic_fetch_add(&x->next, 1);
    if (t >= x->ntasks) break;
    xrt_status s = xrt__rs_run_task(&x->tasks[t]);
    if (!s) continue;
    pthread_mutex_lock(&x->mu);
    xrt__save_error(&x->err, s);
    pthread_mutex_unlock(&x->mu);
    atomic_store(&x->failed, true);
  }
  return NULL;
}

/* Bytes above which the copies of a reshard use several threads. */
#define XRT__RS_PARALLEL_BYTES ((size_t)4 << 20)

/* Runs every planned copy: in parallel over the new pieces when large. */
static xrt_status xrt__rs_copy_all(xrt__rs_var *rs, int nv) {
  int ntasks = 0;
  size_t bytes = 0;
  for (int i = 0; i < nv; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].f.n; k++)
      if (rs[i].pieces[k].keep < 0) {
        ntasks++;
        bytes += xrt_shape_bytes(&rs[i].f.piece);
      }
  if (!ntasks) return XRT_OK;
  xrt__rs_exec x;
  memset(&x, 0, sizeof x);
  const xrt_allocator *a = &rs[0].v->al;
  x.tasks = (xrt__rs_task *)xrt__calloc(a, (size_t)ntasks, sizeof *x.tasks);
  if (!x.tasks) return xrt__nomem("a reshard's copy tasks");
  for (int i = 0; i < nv; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].f.n; k++)
      if (rs[i].pieces[k].keep < 0) x.tasks[x.ntasks++] = (xrt__rs_task){&rs[i], k};
  pthread_mutex_init(&x.mu, NULL);
  int cores = xrt__os_cpu_count();
  int nthreads = bytes < XRT__RS_PARALLEL_BYTES ? 1 : cores > 16 ? 16 : cores;
  if (nthreads > ntasks) nthreads = ntasks;
  pthread_t tid[16];
  int started = 0;
  while (started < nthreads - 1 &&
         pthread_create(&tid[started], NULL, xrt__rs_worker, &x) == 0)
    started++;
  xrt__rs_worker(&x); /* the caller is a worker too */
  for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
  pthread_mutex_destroy(&x.mu);
  xrt__free(a, x.tasks);
  return xrt__restore_error(&x.err);
}

/* Swaps in the new pieces (cannot fail: everything is allocated). */
static void xrt__rs_commit(xrt__rs_var *r) {
  xrt__var *v = r->v;
  for (int k = 0; k < r->f.n; k++) {
    xrt__rs_piece *p = &r->pieces[k];
    r->new_bufs[k] = p->keep >= 0 ? v->bufs[p->keep] : p->buf;
    r->new_devs[k] = r->f.devices[k];
    p->buf = NULL;
  }
  for (int k = 0; k < v->n; k++)
    if (!r->kept[k] && v->bufs[k]) xrt__piece_release(v->bufs[k]);
  xrt__free(&v->al, v->bufs);
  xrt__free(&v->al, v->devices);
  v->bufs = r->new_bufs;
  v->devices = r->new_devs;
  r->new_bufs = NULL;
  r->new_devs = NULL;
  v->n = r->f.n;
  v->spec = r->f.spec;
  v->axes = r->f.axes;
  v->piece = r->f.piece;
  v->key = r->f.key;
}

/* Uploads piece k of format (spec, axes) of a logical host array to dev. */
static xrt_status xrt__var_upload_piece(xrt__var *v,
                                        const xrt_sharding_spec *spec,
                                        const xrt__spec_axes *ax,
                                        const xrt_shape *piece,
                                        const char *host, int k,
                                        xrt_device *dev, xrt_buffer **out) {
  xrt__box box;
  xrt__piece_box(spec, ax, &v->logical, k, &box);
  size_t bytes = xrt_shape_bytes(piece);
  char *stage = (char *)xrt__alloc(&v->al, bytes ? bytes : 1);
  if (!stage) return xrt__nomem("staging a variable's piece");
  xrt__box_copy(&box, (char *)(uintptr_t)host, stage, true);
  xrt_status s = xrt_buffer_from_host((xrt_client *)v->client->handle, dev,
                                      piece, stage, out);
  xrt__free(&v->al, stage);
  return s;
}

/* Rebuilds the old pieces freed early from the host copy (staged plan). */
static xrt_status xrt__rs_restore(xrt__rs_var *r, const char *host) {
  xrt__var *v = r->v;
  for (int k = 0; k < v->n; k++) {
    if (v->bufs[k]) continue;
    xrt_status s = xrt__var_upload_piece(v, &v->spec, &v->axes, &v->piece,
                                         host, k, v->devices[k], &v->bufs[k]);
    if (s) {
      xrt__saved_error err = {XRT_OK, ""};
      xrt__save_error(&err, s);
      return xrt__fail(XRT_DATA_LOSS, "variable '%s': its old piece %d on "
                       "device %d could not be rebuilt after a failed "
                       "reshard: %s", v->name, k, xrt_device_id(v->devices[k]),
                       err.message);
    }
  }
  return XRT_OK;
}

/* The staged plan (see the memory rule above); free_early = false is
 * options->via_host. */
static xrt_status xrt__rs_staged(xrt__rs_var *rs, int nv, bool free_early) {
  xrt__rs_free_new(rs, nv);
  const xrt_allocator *a = &rs[0].v->al;
  char **host = (char **)xrt__calloc(a, (size_t)nv, sizeof *host);
  if (!host) return xrt__nomem("a staged reshard");
  xrt__saved_error err = {XRT_OK, ""};
  for (int i = 0; i < nv && !err.code; i++) {
    if (rs[i].noop) continue;
    size_t bytes = xrt_shape_bytes(&rs[i].v->logical);
    host[i] = (char *)xrt__alloc(a, bytes ? bytes : 1);
    if (!host[i])
      xrt__save_error(&err, xrt__nomem("a staged reshard's host copy"));
    else xrt__save_error(&err, xrt__var_read(rs[i].v, host[i], bytes));
  }
  for (int i = 0; i < nv && !err.code && free_early; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].v->n; k++)
      if (!rs[i].kept[k]) {
        xrt__piece_release(rs[i].v->bufs[k]);
        rs[i].v->bufs[k] = NULL;
      }
  bool freed = !err.code && free_early;
  for (int i = 0; i < nv && !err.code; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].f.n && !err.code; k++)
      if (rs[i].pieces[k].keep < 0)
        xrt__save_error(&err, xrt__var_upload_piece(
                                  rs[i].v, &rs[i].f.spec, &rs[i].f.axes,
                                  &rs[i].f.piece, host[i], k,
                                  rs[i].f.devices[k], &rs[i].pieces[k].buf));
  if (err.code) {
    xrt__rs_free_new(rs, nv);
    for (int i = 0; i < nv && freed; i++) {
      if (rs[i].noop) continue;
      xrt_status s = xrt__rs_restore(&rs[i], host[i]);
      if (s) { /* data loss outranks the original error */
        err.code = XRT_OK;
        xrt__save_error(&err, s);
      }
    }
  }
  for (int i = 0; i < nv; i++) xrt__free(a, host[i]);
  xrt__free(a, host);
  return xrt__restore_error(&err);
}

/* Moves the planned variables: direct copies, or the staged plan when the
 * devices lack memory (or via_host is asked). */
static xrt_status xrt__rs_move(xrt__rs_var *rs, int nv, bool via_host) {
  xrt_status s = XRT_OK;
  for (int i = 0; i < nv && !s; i++)
    if (!rs[i].noop) s = xrt__var_wait_ready(rs[i].v);
  if (s) return s;
  if (via_host) return xrt__rs_staged(rs, nv, false);
  /* Only device memory running out takes the staged plan, which frees old
   * pieces early: host memory running out is an error, or the restore
   * could run out too and lose the data. */
  unsigned host_oom = xrt__nomem_seen;
  s = xrt__rs_alloc(rs, nv);
  if (s == XRT_RESOURCE_EXHAUSTED && host_oom == xrt__nomem_seen)
    return xrt__rs_staged(rs, nv, true);
  if (!s) s = xrt__rs_copy_all(rs, nv);
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt__rs_free_new(rs, nv);
    return xrt__restore_error(&err);
  }
  return XRT_OK;
}

void xrt_reshard_options_init(xrt_reshard_options *options) {
  if (options) memset(options, 0, sizeof *options);
}

/* Checks variable i's target against the locked variable. */
static xrt_status xrt__rs_check(xrt__rs_var *r, int i,
                                const xrt_variable_format *f,
                                xrt__client *c) {
  xrt__var *v = r->v;
  if (v->dead)
    return xrt__fail(XRT_INVALID_ARGUMENT, "variables[%d] was released", i);
  if (v->client != c)
    return xrt__fail(XRT_INVALID_ARGUMENT, "variables[%d] ('%s') belongs to "
                     "another client than variables[0]", i, v->name);
  xrt_status s = xrt__vformat_check(c, &v->logical, f, &r->f);
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    return xrt__fail(s, "variables[%d] ('%s'): %s", i, v->name, err.message);
  }
  r->noop = r->f.key == v->key;
  return XRT_OK;
}

/* Plans and moves the locked variables of a checked call. */
static xrt_status xrt__rs_locked(xrt__rs_var *rs, int count,
                                 const xrt_reshard_options *options) {
  bool any = false;
  xrt_status s = XRT_OK;
  for (int i = 0; i < count && !s; i++)
    if (!rs[i].noop) {
      any = true;
      s = xrt__rs_plan(&rs[i]);
    }
  if (s || !any) return s;
  if ((s = xrt__rs_move(rs, count, options && options->via_host))) return s;
  for (int i = 0; i < count; i++)
    if (!rs[i].noop) xrt__rs_commit(&rs[i]);
  return XRT_OK;
}

static void xrt__rs_trace(xrt__rs_var *rs, int count, int64_t t0) {
  int64_t t1 = xrt__now_ns();
  for (int i = 0; i < count; i++)
    if (!rs[i].noop)
      xrt__trace_complete(rs[i].v->client, -1, "reshard", rs[i].v->name, t0,
                          t1);
}

/* Across processes (below). */
static xrt_status xrt__mpv_reshard(xrt__rs_var *rs, int nv,
                                   const xrt_reshard_options *options,
                                   xrt_status checked);

xrt_status xrt_variables_reshard(xrt_variable *const *variables,
                                 const xrt_variable_format *formats, int count,
                                 const xrt_reshard_options *options) {
  XRT__CHECK_ARG(count >= 0, "count is negative");
  if (count == 0) return XRT_OK;
  XRT__CHECK_ARG(variables && formats, "variables or formats is NULL");
  bool tracing = xrt__trace_on();
  int64_t t0 = tracing ? xrt__now_ns() : 0;
  xrt__rs_var stack[4];
  xrt__var *sorted_stack[4];
  /* More than 4: scratch from the first variable's (client's) allocator. */
  xrt__var *first = count <= 4 ? NULL : xrt__var_acquire(variables[0]);
  if (count > 4 && !first)
    return xrt__fail(XRT_INVALID_ARGUMENT, "variables[0] is not a live "
                     "variable");
  const xrt_allocator *a = first ? &first->al : NULL;
  xrt__rs_var *rs = count <= 4 ? stack
                               : (xrt__rs_var *)xrt__calloc(a, (size_t)count,
                                                            sizeof *rs);
  xrt__var **sorted = count <= 4 ? sorted_stack
                                 : (xrt__var **)xrt__calloc(a, (size_t)count,
                                                            sizeof *sorted);
  xrt_status s = XRT_OK;
  if (!rs || !sorted) s = xrt__nomem("a reshard of many variables");
  else memset(rs, 0, (size_t)count * sizeof *rs);
  int got = 0;
  for (; !s && got < count; got++) {
    rs[got].v = sorted[got] = xrt__var_acquire(variables[got]);
    if (!rs[got].v) {
      s = xrt__fail(XRT_INVALID_ARGUMENT, "variables[%d] is not a live "
                    "variable", got);
      break;
    }
    for (int j = 0; j < got && !s; j++)
      if (rs[j].v == rs[got].v)
        s = xrt__fail(XRT_INVALID_ARGUMENT, "variables[%d] and variables[%d] "
                      "are the same variable", j, got);
    if (s) { got++; break; }
  }
  if (!s) {
    xrt__vars_lock(sorted, count);
    for (int i = 0; i < count && !s; i++)
      s = xrt__rs_check(&rs[i], i, &formats[i], rs[0].v->client);
    if (rs[0].v->client->mp) s = xrt__mpv_reshard(rs, count, options, s);
    else if (!s) s = xrt__rs_locked(rs, count, options);
    if (!s && tracing) xrt__rs_trace(rs, count, t0);
    xrt__vars_unlock(sorted, count);
  }
  for (int i = 0; rs && i < got && i < count; i++) {
    if (rs[i].v) xrt__rs_var_free(&rs[i]);
  }
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  for (int i = 0; rs && i < got && i < count; i++) xrt__var_unref(rs[i].v);
  if (first) {
    if (rs != stack) xrt__free(a, rs);
    if (sorted != sorted_stack) xrt__free(a, sorted);
    xrt__var_unref(first);
  }
  return xrt__restore_error(&err);
}

/* ---- execution over variables ---- */

/* Scratch of one xrt_execute_variables call (at most 64 arguments). */
typedef struct xrt__xv_call {
  xrt__var *vars[64];    /* per argument, NULL for arrays (referenced) */
  xrt__var *uniq[64];    /* distinct variables, locked in handle order */
  int nuniq;
  xrt__sharded *views[64];
  xrt_sharded_array *arrays[64];
} xrt__xv_call;

/* Checks the arguments and acquires their variables (before locking). */
static xrt_status xrt__xv_acquire(const xrt_variable_arg *args, int num_args,
                                  xrt__xv_call *k) {
  for (int i = 0; i < num_args; i++) {
    if (!args[i].variable == !args[i].array)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d: set exactly one of "
                       "variable and array", i);
    if (!args[i].variable) continue;
    k->vars[i] = xrt__var_acquire(args[i].variable);
    if (!k->vars[i])
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d is not a live "
                       "variable", i);
    bool seen = false;
    for (int j = 0; j < k->nuniq && !seen; j++) seen = k->uniq[j] == k->vars[i];
    if (!seen) k->uniq[k->nuniq++] = k->vars[i];
  }
  return XRT_OK;
}

/* Checks updates[] against the arguments and the executable's outputs. */
static xrt_status xrt__xv_check_updates(xrt_executable *exe,
                                        const xrt__xv_call *k, int num_args,
                                        const int *updates, int num_outputs) {
  for (int j = 0; updates && j < num_outputs; j++) {
    int u = updates[j];
    if (u == -1) continue;
    if (u < 0 || u >= num_args || !k->vars[u])
      return xrt__fail(XRT_INVALID_ARGUMENT, "updates[%d] = %d is not the "
                       "index of a variable argument", j, u);
    for (int i = 0; i < j; i++)
      if (updates[i] >= 0 && k->vars[updates[i]] == k->vars[u])
        return xrt__fail(XRT_INVALID_ARGUMENT, "outputs %d and %d both update "
                         "variable '%s'", i, j, k->vars[u]->name);
    xrt_shape out;
    xrt_status s = xrt_executable_output_shape(exe, j, &out);
    if (s) return s;
    if (!xrt__shape_equal(&out, &k->vars[u]->piece)) {
      char h[128], w[128];
      xrt_shape_format(&out, h, sizeof h);
      xrt_shape_format(&k->vars[u]->piece, w, sizeof w);
      return xrt__fail(XRT_INVALID_ARGUMENT, "output %d is %s per device; the "
                       "variable '%s' (argument %d) it updates has pieces %s",
                       j, h, k->vars[u]->name, u, w);
    }
  }
  return XRT_OK;
}

/* Builds the sharded arguments: views of the (locked) variables. */
static xrt_status xrt__xv_views(const xrt_variable_arg *args, int num_args,
                                xrt__xv_call *k) {
  for (int i = 0; i < num_args; i++) {
    if (!k->vars[i]) {
      k->arrays[i] = args[i].array;
      continue;
    }
    if (k->vars[i]->dead)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d: variable was "
                       "released", i);
    xrt_status s = xrt__var_view(k->vars[i], &k->views[i]);
    if (s) return s;
    k->arrays[i] = (xrt_sharded_array *)k->views[i]->handle;
  }
  return XRT_OK;
}

/* Runs and waits; on failure releases every output. */
static xrt_status xrt__xv_run(xrt_executable *exe, xrt__xv_call *k,
                              int num_args, const int *updates,
                              xrt_sharded_array **outs, int num_outputs,
                              const xrt_execute_options *options) {
  const xrt_sharding_spec *specs[256];
  XRT__CHECK_ARG(num_outputs <= 256, "more than 256 outputs");
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  if (options) o = *options;
  for (int j = 0; j < num_outputs; j++)
    specs[j] = updates && updates[j] >= 0 ? &k->vars[updates[j]]->spec
               : options && options->output_specs ? options->output_specs[j]
                                                  : NULL;
  o.output_specs = specs;
  xrt_event *done = NULL;
  xrt_status s = xrt_execute_sharded(exe, k->arrays, num_args, outs,
                                     num_outputs, &o, &done);
  if (!s) {
    s = xrt_event_await(done);
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_event_release(done);
    s = xrt__restore_error(&err);
  }
  if (s)
    for (int j = 0; j < num_outputs; j++) {
      xrt_sharded_array_release(outs[j]);
      outs[j] = NULL;
    }
  return s;
}

/* Donation: variable u takes over the output's pieces. */
static void xrt__xv_donate(xrt__var *v, xrt_sharded_array *out) {
  xrt__sharded *a = xrt__sharded_get(out);
  for (int d = 0; d < v->n; d++) {
    xrt__piece_release(v->bufs[d]);
    v->bufs[d] = a->bufs[d];
  }
  xrt__sharded_free(a, false);
}

/* ---- variables across processes (issue #11) ----
 *
 * Included once in section 13c of xrt.c.  A variable of a multi-process
 * client keeps devices[k] = piece k's global device (an XRT__H_RDEVICE
 * handle on another process) and bufs[k] = NULL for the pieces other
 * processes hold.  Every call here is made by every process with the same
 * arguments (see "Objects that span processes" in xrt.h).
 *
 * Agreement: a fixed-size vote per process (status, message, a digest of
 * the call's arguments), all-gathered on a core tag; the call goes on only
 * if every process succeeded and the digests match, else every process
 * returns the first failing process's error, naming it.
 *
 * Reshard across processes: (1) check, plan (section 13c's planner, with
 * sources re-picked to prefer this process), allocate the new local
 * pieces and the host staging, vote; (2) download the boxes other
 * processes need, one exchange message per peer (zeros when a download
 * failed, so nobody waits), write the received boxes into the new pieces,
 * then the device-to-device copies inside this process; (3) vote again:
 * all commit, or all drop their new pieces. */

#define XRT__MPV_STACK 8 /* votes (512 bytes each) kept on the stack */

/* One process's vote. */
typedef struct xrt__mpv_vote {
  int32_t code;
  int32_t work;    /* reshard: this process has something to move */
  uint64_t digest; /* the arguments as this process sees them */
  char message[496];
} xrt__mpv_vote;

/* All-gathers the votes of step what; *any_work (may be NULL) receives
 * whether any process has work.  The local error (local != OK) is the
 * thread's last error on entry. */
static xrt_status xrt__mpv_agree(xrt__client *c, xrt_status local,
                                 uint64_t digest, int32_t work,
                                 int32_t *any_work, const char *what) {
  struct xrt__mp *mp = c->mp;
  xrt__mpv_vote mine;
  memset(&mine, 0, sizeof mine);
  mine.code = (int32_t)local;
  mine.work = work;
  mine.digest = digest;
  if (local) { /* truncated to the record */
    const char *e = xrt_last_error();
    size_t len = strlen(e);
    if (len >= sizeof mine.message) len = sizeof mine.message - 1;
    memcpy(mine.message, e, len);
  }
  uint64_t tag = xrt__mp_next_tag(c); /* taken even if the table fails */
  /* Up to XRT__MPV_STACK processes the table is on the stack, so that a
   * process out of host memory still votes (and says so) instead of
   * leaving the others to time out. */
  xrt__mpv_vote stack[XRT__MPV_STACK];
  xrt__mpv_vote *all = mp->nproc <= XRT__MPV_STACK
                           ? stack
                           : (xrt__mpv_vote *)xrt__calloc(
                                 &c->allocator, (size_t)mp->nproc, sizeof *all);
  if (!all) return xrt__nomem("the votes of the processes");
  xrt_status s = xrt__mp_allgather(c, tag, &mine, all, sizeof mine, what);
  for (int p = 0; !s && p < mp->nproc; p++)
    if (all[p].code)
      s = xrt__fail((xrt_status)all[p].code, "%s: process %d failed: %.*s",
                    what, p, (int)sizeof all[p].message - 1, all[p].message);
  for (int p = 1; !s && p < mp->nproc; p++)
    if (all[p].digest != all[0].digest)
      s = xrt__fail(XRT_INVALID_ARGUMENT, "%s: process %d was called with "
                    "other arguments than process 0 (every process must "
                    "make the same call)", what, p);
  int32_t w = 0;
  for (int p = 0; !s && p < mp->nproc; p++) w |= all[p].work;
  if (any_work) *any_work = w;
  if (all != stack) xrt__free(&c->allocator, all);
  return s;
}

static int xrt__mpv_proc(xrt_device *d) { return xrt_device_process_index(d); }

/* Copies the box (start, ext) of a dense host array of dims src_dims into
 * (dst_start of) a dense host array of dims dst_dims. */
static void xrt__mpv_host_box(int rank, size_t elem, const void *src,
                              const int64_t *src_dims,
                              const int64_t *src_start, void *dst,
                              const int64_t *dst_dims,
                              const int64_t *dst_start, const int64_t *ext) {
  xrt_plugin_copy_region_args a;
  memset(&a, 0, sizeof a);
  a.src = (void *)(uintptr_t)src;
  a.src_dims = src_dims;
  a.src_start = src_start;
  a.dst = dst;
  a.dst_dims = dst_dims;
  a.dst_start = dst_start;
  a.extent = ext;
  a.rank = rank;
  a.elem_bytes = elem;
  xrt__region_host(&a);
}

static size_t xrt__mpv_box_bytes(const xrt__var *v, const xrt__rs_copy *cp) {
  size_t b = xrt_dtype_size(v->logical.dtype);
  for (int d = 0; d < v->logical.rank; d++) b *= (size_t)cp->ext[d];
  return b;
}

/* ---- create ---- */

/* Uploads piece k (of a checked format) of a host array to its device. */
static xrt_status xrt__mpv_upload(xrt__client *c, const xrt_shape *logical,
                                  const xrt__vformat *f, const char *host,
                                  int k, xrt_buffer **out) {
  xrt__box box;
  xrt__piece_box(&f->spec, &f->axes, logical, k, &box);
  size_t bytes = xrt_shape_bytes(&f->piece);
  char *stage = (char *)xrt__alloc(&c->allocator, bytes ? bytes : 1);
  if (!stage) return xrt__nomem("staging a variable's piece");
  if (host) xrt__box_copy(&box, (char *)(uintptr_t)host, stage, true);
  xrt_status s = xrt_buffer_from_host((xrt_client *)c->handle, f->devices[k],
                                      &f->piece, stage, out);
  xrt__free(&c->allocator, stage);
  return s;
}

/* xrt_variable_create on a multi-process client: this process's pieces. */
static xrt_status xrt__mpv_create(xrt__client *c, const char *name,
                                  const xrt_shape *logical, const void *data,
                                  const xrt__vformat *f,
                                  xrt_variable **out_variable) {
  XRT__CHECK_ARG(data || xrt_shape_bytes(logical) == 0, "data is NULL");
  xrt_buffer **bufs = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)f->n,
                                                 sizeof *bufs);
  if (!bufs) return xrt__nomem("a variable's piece list");
  xrt_status s = XRT_OK;
  for (int k = 0; k < f->n && !s; k++)
    if (xrt_device_is_addressable(f->devices[k]) == 1)
      s = xrt__mpv_upload(c, logical, f, (const char *)data, k, &bufs[k]);
  xrt__var *v = NULL;
  if (!s) s = xrt__var_new(c, name, logical, f, bufs, &v);
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    for (int k = 0; k < f->n; k++) xrt_buffer_release(bufs[k]);
    s = xrt__restore_error(&err);
  } else {
    *out_variable = (xrt_variable *)v->handle;
  }
  xrt__free(&c->allocator, bufs);
  return s;
}

/* ---- reshard ---- */

/* Re-picks each planned copy's source replica: one on the destination
 * device, else one in the destination's process, else the planner's
 * pick.  Every process computes the same. */
static void xrt__mpv_pick_sources(xrt__rs_var *r) {
  xrt__var *v = r->v;
  int64_t start[XRT_MAX_RANK], id, other;
  for (int k = 0; k < r->f.n; k++) {
    xrt__rs_piece *p = &r->pieces[k];
    int pd = xrt__mpv_proc(r->f.devices[k]);
    for (int c = 0; c < p->ncopies; c++) {
      int j0 = p->copies[c].src, best = j0;
      xrt__spec_locate(&v->spec, &v->axes, &v->logical, j0, start, &id);
      if (v->devices[j0] == r->f.devices[k]) continue;
      for (int j = 0; j < v->n; j++) {
        xrt__spec_locate(&v->spec, &v->axes, &v->logical, j, start, &other);
        if (other != id) continue;
        if (v->devices[j] == r->f.devices[k]) { best = j; break; }
        if (xrt__mpv_proc(v->devices[j]) == pd &&
            xrt__mpv_proc(v->devices[best]) != pd)
          best = j;
      }
      p->copies[c].src = best;
    }
  }
}

/* One planned box copy of a new piece that is not kept: copy c of new
 * piece k of variable i, from process `from` to process `to`.  Every
 * process lists the same moves in the same order. */
typedef struct xrt__mpv_move {
  int i, k, c, from, to;
  size_t bytes;
} xrt__mpv_move;

/* Scratch of one reshard across processes. */
typedef struct xrt__mpv_rs {
  xrt__client *c;
  int nproc, me;
  size_t *send_bytes, *recv_bytes; /* [nproc] */
  char **send, **recv;             /* [nproc] */
  char ***stage;                   /* [nv][f.n]: new pieces built on host */
  char ***old;                     /* [nv][v->n]: old pieces downloaded */
  xrt__mpv_move *moves;
  int nmoves;
} xrt__mpv_rs;

static void xrt__mpv_rs_free(xrt__mpv_rs *x, xrt__rs_var *rs, int nv) {
  const xrt_allocator *a = &x->c->allocator;
  for (int p = 0; p < x->nproc; p++) {
    if (x->send) xrt__free(a, x->send[p]);
    if (x->recv) xrt__free(a, x->recv[p]);
  }
  for (int i = 0; i < nv; i++) {
    for (int k = 0; x->stage && x->stage[i] && k < rs[i].f.n; k++)
      xrt__free(a, x->stage[i][k]);
    for (int k = 0; x->old && x->old[i] && k < rs[i].v->n; k++)
      xrt__free(a, x->old[i][k]);
    if (x->stage) xrt__free(a, x->stage[i]);
    if (x->old) xrt__free(a, x->old[i]);
  }
  xrt__free(a, x->send_bytes);
  xrt__free(a, x->recv_bytes);
  xrt__free(a, x->send);
  xrt__free(a, x->recv);
  xrt__free(a, x->stage);
  xrt__free(a, x->old);
  xrt__free(a, x->moves);
}

/* Lists the moves of the planned call. */
static xrt_status xrt__mpv_list_moves(xrt__mpv_rs *x, xrt__rs_var *rs,
                                      int nv) {
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (int i = 0; i < nv; i++)
      for (int k = 0; !rs[i].noop && k < rs[i].f.n; k++)
        for (int c = 0; rs[i].pieces[k].keep < 0 &&
                        c < rs[i].pieces[k].ncopies; c++, n++) {
          if (!pass) continue;
          const xrt__rs_copy *cp = &rs[i].pieces[k].copies[c];
          x->moves[n] = (xrt__mpv_move){
              i, k, c, xrt__mpv_proc(rs[i].v->devices[cp->src]),
              xrt__mpv_proc(rs[i].f.devices[k]),
              xrt__mpv_box_bytes(rs[i].v, cp)};
        }
    if (pass) break;
    x->moves = (xrt__mpv_move *)xrt__calloc(&x->c->allocator,
                                            (size_t)(n ? n : 1),
                                            sizeof *x->moves);
    if (!x->moves) return xrt__nomem("a reshard's move list");
  }
  x->nmoves = n;
  return XRT_OK;
}

/* Sizes the messages and allocates the host memory of the move. */
static xrt_status xrt__mpv_rs_alloc_host(xrt__mpv_rs *x, xrt__rs_var *rs,
                                         int nv) {
  const xrt_allocator *a = &x->c->allocator;
  size_t np = (size_t)x->nproc;
  x->send_bytes = (size_t *)xrt__calloc(a, np, sizeof(size_t));
  x->recv_bytes = (size_t *)xrt__calloc(a, np, sizeof(size_t));
  x->send = (char **)xrt__calloc(a, np, sizeof(char *));
  x->recv = (char **)xrt__calloc(a, np, sizeof(char *));
  x->stage = (char ***)xrt__calloc(a, (size_t)nv, sizeof(char **));
  x->old = (char ***)xrt__calloc(a, (size_t)nv, sizeof(char **));
  if (!x->send_bytes || !x->recv_bytes || !x->send || !x->recv ||
      !x->stage || !x->old)
    return xrt__nomem("a reshard's exchange tables");
  for (int i = 0; i < nv; i++) {
    if (rs[i].noop) continue;
    x->stage[i] = (char **)xrt__calloc(a, (size_t)rs[i].f.n, sizeof(char *));
    x->old[i] = (char **)xrt__calloc(a, (size_t)rs[i].v->n, sizeof(char *));
    if (!x->stage[i] || !x->old[i])
      return xrt__nomem("a reshard's exchange tables");
  }
  xrt_status s = xrt__mpv_list_moves(x, rs, nv);
  if (s) return s;
  for (int m = 0; m < x->nmoves; m++) {
    const xrt__mpv_move *w = &x->moves[m];
    if (w->from == w->to) continue;
    if (w->from == x->me) x->send_bytes[w->to] += w->bytes;
    if (w->to != x->me) continue;
    x->recv_bytes[w->from] += w->bytes;
    if (!x->stage[w->i][w->k]) {
      size_t pb = xrt_shape_bytes(&rs[w->i].f.piece);
      x->stage[w->i][w->k] = (char *)xrt__calloc(a, pb ? pb : 1, 1);
      if (!x->stage[w->i][w->k])
        return xrt__nomem("staging a reshard's piece");
    }
  }
  for (int p = 0; p < x->nproc; p++) {
    if (x->send_bytes[p] &&
        !(x->send[p] = (char *)xrt__calloc(a, x->send_bytes[p], 1)))
      return xrt__nomem("a reshard's message to another process");
    if (x->recv_bytes[p] &&
        !(x->recv[p] = (char *)xrt__calloc(a, x->recv_bytes[p], 1)))
      return xrt__nomem("a reshard's message from another process");
  }
  return XRT_OK;
}

/* Allocates the new pieces on this process's devices. */
static xrt_status xrt__mpv_rs_alloc_dev(xrt__rs_var *rs, int nv) {
  for (int i = 0; i < nv; i++) {
    xrt__rs_var *r = &rs[i];
    if (r->noop) continue;
    size_t bytes = xrt_shape_bytes(&r->f.piece);
    for (int k = 0; k < r->f.n; k++) {
      xrt__device *d = xrt__device_get(r->f.devices[k]);
      if (r->pieces[k].keep >= 0 || !d) continue;
      xrt__buffer *b;
      xrt_status s = xrt__buffer_new(r->v->client, d->index, &r->f.piece,
                                     bytes, NULL, &b);
      if (s) return s;
      r->pieces[k].buf = (xrt_buffer *)b->handle;
    }
  }
  return XRT_OK;
}

/* Step 1, local: plan, allocate, wait for the old pieces.  *work: this
 * process moves anything. */
static xrt_status xrt__mpv_rs_prepare(xrt__mpv_rs *x, xrt__rs_var *rs,
                                      int nv, int32_t *work) {
  xrt_status s = XRT_OK;
  for (int i = 0; i < nv && !s; i++) {
    if (rs[i].noop) continue;
    if (!(s = xrt__rs_plan(&rs[i]))) xrt__mpv_pick_sources(&rs[i]);
    if (!s) s = xrt__var_wait_ready(rs[i].v);
    *work = 1;
  }
  if (!s && *work) s = xrt__mpv_rs_alloc_host(x, rs, nv);
  if (!s && *work) s = xrt__mpv_rs_alloc_dev(rs, nv);
  return s;
}

/* The host copy of old piece j of variable i (downloaded once). */
static xrt_status xrt__mpv_old_piece(xrt__mpv_rs *x, xrt__rs_var *r, int i,
                                     int j, const char **out) {
  if (!x->old[i][j]) {
    size_t b = xrt_shape_bytes(&r->v->piece);
    char *h = (char *)xrt__alloc(&x->c->allocator, b ? b : 1);
    if (!h) return xrt__nomem("a reshard's host copy of a piece");
    xrt_status s = xrt_buffer_to_host(r->v->bufs[j], h, b);
    if (s) {
      xrt__free(&x->c->allocator, h);
      return s;
    }
    x->old[i][j] = h;
  }
  *out = x->old[i][j];
  return XRT_OK;
}

/* Step 2a: packs every box this process sends (failures leave zeros). */
static xrt_status xrt__mpv_rs_pack(xrt__mpv_rs *x, xrt__rs_var *rs) {
  xrt__saved_error err = {XRT_OK, ""};
  size_t *at = (size_t *)xrt__calloc(&x->c->allocator, (size_t)x->nproc,
                                     sizeof(size_t));
  if (!at) return xrt__nomem("a reshard's message offsets");
  int64_t zero[XRT_MAX_RANK] = {0};
  for (int m = 0; m < x->nmoves; m++) {
    const xrt__mpv_move *w = &x->moves[m];
    if (w->from != x->me || w->to == x->me) continue;
    xrt__rs_var *r = &rs[w->i];
    const xrt__rs_copy *cp = &r->pieces[w->k].copies[w->c];
    const char *src = NULL;
    if (!err.code)
      xrt__save_error(&err, xrt__mpv_old_piece(x, r, w->i, cp->src, &src));
    if (src)
      xrt__mpv_host_box(r->v->logical.rank, xrt_dtype_size(r->v->logical.dtype),
                        src, r->old_ext, cp->src_start,
                        x->send[w->to] + at[w->to], cp->ext, zero, cp->ext);
    at[w->to] += w->bytes;
  }
  xrt__free(&x->c->allocator, at);
  return xrt__restore_error(&err);
}

/* Step 2b: the exchange, one message per peer each way. */
static xrt_status xrt__mpv_rs_exchange(xrt__mpv_rs *x) {
  const xrt_allocator *a = &x->c->allocator;
  uint64_t tag = xrt__mp_next_tag(x->c);
  xrt_transport_msg *m = (xrt_transport_msg *)xrt__calloc(
      a, 2 * (size_t)x->nproc, sizeof *m);
  if (!m) return xrt__nomem("a reshard's messages");
  int ns = 0, nr = 0;
  for (int p = 0; p < x->nproc; p++) {
    if (x->send_bytes[p])
      m[ns++] = (xrt_transport_msg){p, x->send[p], x->send_bytes[p]};
    if (x->recv_bytes[p])
      m[x->nproc + nr++] = (xrt_transport_msg){p, x->recv[p], x->recv_bytes[p]};
  }
  xrt_status s = ns || nr ? xrt__mp_exchange(x->c, tag, m, ns, m + x->nproc,
                                             nr, "xrt_variables_reshard: "
                                             "moving pieces between processes")
                          : XRT_OK;
  xrt__free(a, m);
  return s;
}

/* Writes a host-built new piece into its (new, unshared) buffer. */
static xrt_status xrt__mpv_write(xrt__client *c, xrt_buffer *h,
                                 const void *host) {
  xrt__buffer *b = (xrt__buffer *)xrt__hget(h, XRT__H_BUFFER);
  if (!b) return xrt__fail(XRT_INTERNAL, "a new piece is gone");
  xrt_plugin_error err = {{0}};
  XRT__STAT(c, H2D, 1);
  xrt_status s = c->api->buffer_write(c->pc, b->device, b->mem, host,
                                      b->bytes, &err);
  return s ? xrt__fail_plugin(s, c->api->name, &err) : XRT_OK;
}

/* Step 2c: the received boxes into the staged new pieces, those written to
 * their devices, then the copies inside this process. */
static xrt_status xrt__mpv_rs_fill(xrt__mpv_rs *x, xrt__rs_var *rs, int nv) {
  size_t *at = (size_t *)xrt__calloc(&x->c->allocator, (size_t)x->nproc,
                                     sizeof(size_t));
  if (!at) return xrt__nomem("a reshard's message offsets");
  int64_t zero[XRT_MAX_RANK] = {0};
  for (int m = 0; m < x->nmoves; m++) {
    const xrt__mpv_move *w = &x->moves[m];
    if (w->to != x->me || w->from == x->me) continue;
    xrt__rs_var *r = &rs[w->i];
    const xrt__rs_copy *cp = &r->pieces[w->k].copies[w->c];
    xrt__mpv_host_box(r->v->logical.rank, xrt_dtype_size(r->v->logical.dtype),
                      x->recv[w->from] + at[w->from], cp->ext, zero,
                      x->stage[w->i][w->k], r->new_ext, cp->dst_start,
                      cp->ext);
    at[w->from] += w->bytes;
  }
  xrt__free(&x->c->allocator, at);
  xrt_status s = XRT_OK;
  for (int i = 0; i < nv && !s; i++)
    for (int k = 0; !rs[i].noop && k < rs[i].f.n && !s; k++)
      if (x->stage[i][k]) s = xrt__mpv_write(x->c, rs[i].pieces[k].buf,
                                             x->stage[i][k]);
  for (int m = 0; !s && m < x->nmoves; m++) {
    const xrt__mpv_move *w = &x->moves[m];
    if (w->from != x->me || w->to != x->me) continue;
    xrt__rs_var *r = &rs[w->i];
    const xrt__rs_copy *cp = &r->pieces[w->k].copies[w->c];
    xrt__buffer *src = (xrt__buffer *)xrt__hget(r->v->bufs[cp->src],
                                                XRT__H_BUFFER);
    xrt__buffer *dst = (xrt__buffer *)xrt__hget(r->pieces[w->k].buf,
                                                XRT__H_BUFFER);
    s = src && dst ? xrt__region_copy(x->c, src, dst, r->v->logical.rank,
                                      r->old_ext, cp->src_start, r->new_ext,
                                      cp->dst_start, cp->ext)
                   : xrt__fail(XRT_INTERNAL, "a reshard's piece is gone");
  }
  return s;
}

/* A digest of the call's variables and formats (old and new keys). */
static uint64_t xrt__mpv_rs_digest(const xrt__rs_var *rs, int nv) {
  uint64_t h = xrt__key_mix(0xcbf29ce484222325ull, (uint64_t)nv);
  for (int i = 0; i < nv; i++) {
    h = xrt__key_mix(h, rs[i].v->key);
    h = xrt__key_mix(h, rs[i].f.key);
  }
  return h;
}

/* xrt_variables_reshard's locked part on a multi-process client; checked
 * is the status of the local checks (which every process must hear of). */
static xrt_status xrt__mpv_reshard(xrt__rs_var *rs, int nv,
                                   const xrt_reshard_options *options,
                                   xrt_status checked) {
  XRT__UNUSED(options); /* every move is host-staged across processes */
  xrt__mpv_rs x;
  memset(&x, 0, sizeof x);
  x.c = rs[0].v->client;
  x.nproc = x.c->mp->nproc;
  x.me = x.c->mp->me;
  int32_t work = 0, any = 0;
  xrt_status s = checked ? checked : xrt__mpv_rs_prepare(&x, rs, nv, &work);
  s = xrt__mpv_agree(x.c, s, checked ? 0 : xrt__mpv_rs_digest(rs, nv), work,
                     &any, "xrt_variables_reshard");
  if (!s && any) {
    xrt__saved_error err = {XRT_OK, ""};
    if (work) xrt__save_error(&err, xrt__mpv_rs_pack(&x, rs));
    xrt_status e = xrt__mpv_rs_exchange(&x);
    if (!e && work && !err.code) e = xrt__mpv_rs_fill(&x, rs, nv);
    xrt__save_error(&err, e);
    /* A failed exchange may have missed peers: still vote, so that the
     * ones that heard everything do not commit alone. */
    if (err.code) xrt__fail(err.code, "%s", err.message);
    s = xrt__mpv_agree(x.c, err.code, 0, 0, NULL, "xrt_variables_reshard");
  }
  xrt__mpv_rs_free(&x, rs, nv); /* before the commit changes v->n */
  if (!s)
    for (int i = 0; i < nv; i++)
      if (!rs[i].noop) xrt__rs_commit(&rs[i]);
  if (s) {
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt__rs_free_new(rs, nv);
    s = xrt__restore_error(&err);
  }
  return s;
}

/* ---- execution ---- */

/* Piece lists of argument i (a locked variable or a sharded array). */
static xrt_status xrt__mpv_arg(const xrt_variable_arg *arg, xrt__var *v,
                               int i, int *n, xrt_buffer *const **bufs,
                               xrt_device *const **devs) {
  if (v) {
    if (v->dead)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d: variable was "
                       "released", i);
    *n = v->n;
    *bufs = v->bufs;
    *devs = v->devices;
    return XRT_OK;
  }
  xrt__sharded *a = xrt__sharded_get(arg->array);
  if (!a)
    return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d is not a live sharded "
                     "array", i);
  *n = a->n;
  *bufs = a->bufs;
  *devs = a->devices;
  return XRT_OK;
}

/* Scratch of one execution over variables across processes. */
typedef struct xrt__mpv_xv {
  xrt_buffer **in, **out;        /* [n][num_args], [n][num_outputs] */
  xrt_buffer *const **lists;     /* [n] */
  xrt_buffer ***olists;          /* [n] */
  xrt_sharding_spec *specs;      /* [num_outputs] */
  xrt_shape *logical;
  xrt__spec_axes *axes;
} xrt__mpv_xv;

static void xrt__mpv_xv_free(xrt__client *c, xrt__mpv_xv *x) {
  xrt__free(&c->allocator, x->in);
  xrt__free(&c->allocator, x->out);
  xrt__free(&c->allocator, (void *)x->lists);
  xrt__free(&c->allocator, x->olists);
  xrt__free(&c->allocator, x->specs);
  xrt__free(&c->allocator, x->logical);
  xrt__free(&c->allocator, x->axes);
}

/* Fills the launch's lists: the arguments must span the executable's
 * participants, in order. */
static xrt_status xrt__mpv_xv_lists(xrt_executable *exe, xrt__client *c,
                                    const xrt_variable_arg *args, int na,
                                    xrt__xv_call *k, int n, int no,
                                    xrt__mpv_xv *x) {
  size_t sa = (size_t)(na ? na : 1), so = (size_t)(no ? no : 1);
  x->in = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n * sa,
                                     sizeof *x->in);
  x->out = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n * so,
                                      sizeof *x->out);
  x->lists = (xrt_buffer *const **)xrt__calloc(&c->allocator, (size_t)n,
                                               sizeof *x->lists);
  x->olists = (xrt_buffer ***)xrt__calloc(&c->allocator, (size_t)n,
                                          sizeof *x->olists);
  x->specs = (xrt_sharding_spec *)xrt__calloc(&c->allocator, so,
                                              sizeof *x->specs);
  x->logical = (xrt_shape *)xrt__calloc(&c->allocator, so, sizeof *x->logical);
  x->axes = (xrt__spec_axes *)xrt__calloc(&c->allocator, so, sizeof *x->axes);
  if (!x->in || !x->out || !x->lists || !x->olists || !x->specs ||
      !x->logical || !x->axes)
    return xrt__nomem("an execution's argument tables");
  for (int p = 0; p < n; p++) {
    bool here = xrt_device_is_addressable(xrt_executable_device(exe, p)) == 1;
    x->lists[p] = here ? x->in + (size_t)p * sa : NULL;
    x->olists[p] = here ? x->out + (size_t)p * so : NULL;
  }
  for (int i = 0; i < na; i++) {
    int m = 0;
    xrt_buffer *const *bufs = NULL;
    xrt_device *const *devs = NULL;
    xrt_status s = xrt__mpv_arg(&args[i], k->vars[i], i, &m, &bufs, &devs);
    if (s) return s;
    if (m != n)
      return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d spans %d devices, "
                       "@%s runs on %d", i, m, xrt_executable_name(exe), n);
    for (int p = 0; p < n; p++) {
      int want = xrt_device_global_id(xrt_executable_device(exe, p));
      if (xrt_device_global_id(devs[p]) != want)
        return xrt__fail(XRT_INVALID_ARGUMENT, "argument %d has piece %d on "
                         "global device %d, @%s runs participant %d on global "
                         "device %d", i, p, xrt_device_global_id(devs[p]),
                         xrt_executable_name(exe), p, want);
      if (x->lists[p]) x->in[(size_t)p * sa + (size_t)i] = bufs[p];
    }
  }
  return XRT_OK;
}

/* The output specs: an updated variable's, else the options' or pmap's. */
static xrt_status xrt__mpv_xv_specs(xrt_executable *exe, xrt__xv_call *k,
                                    const int *updates, int no, int n,
                                    const xrt_execute_options *options,
                                    xrt__mpv_xv *x) {
  const xrt_sharding_spec *specs[256];
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  if (options) o = *options;
  for (int j = 0; j < no; j++)
    specs[j] = updates && updates[j] >= 0 ? &k->vars[updates[j]]->spec
               : options && options->output_specs ? options->output_specs[j]
                                                  : NULL;
  o.output_specs = specs;
  for (int j = 0; j < no; j++) {
    xrt_status s = xrt__output_spec(exe, &o, j, n, &x->specs[j],
                                    &x->logical[j], &x->axes[j]);
    if (s) return s;
  }
  return XRT_OK;
}

/* Output j as a sharded array over the executable's global devices. */
static xrt_status xrt__mpv_xv_wrap(xrt_executable *exe, xrt__client *c,
                                   xrt__mpv_xv *x, int j, int n, int no,
                                   xrt_sharded_array **out) {
  xrt_buffer **col = (xrt_buffer **)xrt__calloc(&c->allocator, (size_t)n,
                                                sizeof *col);
  if (!col) return xrt__nomem("an execution's output column");
  for (int p = 0; p < n; p++)
    col[p] = x->out[(size_t)p * (size_t)(no ? no : 1) + (size_t)j];
  xrt__sharded *a = NULL;
  xrt_status s = xrt__sharded_new(c, &x->logical[j], &x->specs[j],
                                  &x->axes[j], col, n, &a);
  xrt__free(&c->allocator, col);
  if (s) return s;
  for (int p = 0; p < n; p++) a->devices[p] = xrt_executable_device(exe, p);
  for (int p = 0; p < n; p++) /* the array owns them now */
    x->out[(size_t)p * (size_t)(no ? no : 1) + (size_t)j] = NULL;
  *out = (xrt_sharded_array *)a->handle;
  return XRT_OK;
}

/* A digest of an execution's arguments as this process sees them. */
static uint64_t xrt__mpv_xv_digest(const xrt__xv_call *k, int na,
                                   const int *updates, int no) {
  uint64_t h = xrt__key_mix(xrt__key_mix(0xcbf29ce484222325ull,
                                         (uint64_t)na), (uint64_t)no);
  for (int i = 0; i < na; i++)
    h = xrt__key_mix(h, k->vars[i] ? k->vars[i]->key : 0);
  for (int j = 0; updates && j < no; j++)
    h = xrt__key_mix(h, (uint64_t)(int64_t)updates[j]);
  return h;
}

/* xrt_execute_variables' locked part on a multi-process client: each
 * process launches its participants, then all vote; donation replaces
 * this process's pieces only. */
static xrt_status xrt__mpv_execute(xrt_executable *exe,
                                   const xrt_variable_arg *args, int na,
                                   xrt__xv_call *k, const int *updates,
                                   xrt_sharded_array **outputs, int no,
                                   const xrt_execute_options *options) {
  xrt__client *c = xrt__executable_get(exe)->client;
  int n = xrt_executable_num_replicas(exe) *
          xrt_executable_num_partitions(exe);
  size_t so = (size_t)(no ? no : 1);
  xrt__mpv_xv x;
  memset(&x, 0, sizeof x);
  xrt_status s = xrt__mpv_xv_lists(exe, c, args, na, k, n, no, &x);
  if (!s) s = xrt__mpv_xv_specs(exe, k, updates, no, n, options, &x);
  if (!s) {
    xrt_execute_options o;
    xrt_execute_options_init(&o);
    if (options) o = *options;
    o.output_specs = NULL;
    xrt_event *done = NULL;
    s = xrt_execute_multi(exe, x.lists, n, na, x.olists, no, &o, &done);
    if (!s) s = xrt_event_await(done);
    xrt__saved_error err = {XRT_OK, ""};
    xrt__save_error(&err, s);
    xrt_event_release(done);
    s = xrt__restore_error(&err);
  }
  s = xrt__mpv_agree(c, s, xrt__mpv_xv_digest(k, na, updates, no), 0, NULL,
                     "xrt_execute_variables");
  for (int j = 0; !s && j < no; j++) {
    if (!updates || updates[j] < 0) {
      s = xrt__mpv_xv_wrap(exe, c, &x, j, n, no, &outputs[j]);
      continue;
    }
    xrt__var *v = k->vars[updates[j]];
    for (int p = 0; p < n; p++) {
      xrt_buffer **o = &x.out[(size_t)p * so + (size_t)j];
      if (!*o) continue;
      xrt__piece_release(v->bufs[p]);
      v->bufs[p] = *o;
      *o = NULL;
    }
  }
  if (s)
    for (int j = 0; j < no; j++) {
      xrt_sharded_array_release(outputs[j]);
      outputs[j] = NULL;
    }
  for (size_t i = 0; x.out && i < (size_t)n * so; i++)
    xrt_buffer_release(x.out[i]);
  xrt__mpv_xv_free(c, &x);
  return s;
}

/* ---- save and load ---- */

/* Writes the array as .npy at path through a temporary file beside it. */
static xrt_status xrt__mpv_write_file(const xrt_allocator *a, const char *path,
                                      const xrt_shape *shape,
                                      const void *data, size_t bytes) {
  size_t n = strlen(path) + 16;
  char *tmp = (char *)xrt__alloc(a, n);
  if (!tmp) return xrt__nomem("a temporary file name");
  char why[512];
  snprintf(tmp, n, "%s.tmpXXXXXX", path);
  int err = xrt__os_temp_file(tmp, why, sizeof why);
  xrt_status s = XRT_OK;
  if (err)
    s = xrt__fail(err == ENOENT ? XRT_NOT_FOUND : XRT_INVALID_ARGUMENT,
                  "%s: cannot create a temporary file beside it: %s", path,
                  why);
  else if (!(s = xrt__npy_write_host(tmp, shape, data, bytes)) &&
           xrt__os_replace_file(tmp, path, why, sizeof why) != 0)
    s = xrt__fail(XRT_DATA_LOSS, "%s: cannot rename %s over it: %s", path,
                  tmp, why);
  if (s && !err) remove(tmp);
  xrt__free(a, tmp);
  return s;
}

/* xrt_variable_save on a multi-process client (v open; closed here): the
 * whole array gathered, process 0 writes, every process returns the same
 * status. */
static xrt_status xrt__mpv_save(xrt__var *v, const char *path) {
  xrt__client *c = v->client;
  xrt_shape shape = v->logical;
  size_t bytes = xrt_shape_bytes(&shape);
  xrt_allocator a = v->al;
  void *data = xrt__alloc(&a, bytes ? bytes : 1);
  xrt_status s = data ? xrt__var_read(v, data, bytes) /* collective */
                      : xrt__nomem("a variable's host copy");
  xrt__var_close(v);
  if (!s && c->mp->me == 0) s = xrt__mpv_write_file(&a, path, &shape, data,
                                                    bytes);
  xrt__free(&a, data);
  return xrt__mpv_agree(c, s, 0, 0, NULL, "xrt_variable_save");
}

/* xrt_variable_load on a multi-process client (v open and locked): every
 * process reads the file and uploads its pieces; all commit or none. */
static xrt_status xrt__mpv_load(xrt__var *v, const char *path) {
  xrt__client *c = v->client;
  void *data = NULL;
  xrt_buffer **nb = (xrt_buffer **)xrt__calloc(&v->al, (size_t)v->n,
                                               sizeof *nb);
  xrt_shape have;
  size_t bytes;
  xrt_status s = nb ? xrt__npy_read_host(&v->al, path, &v->logical, &have,
                                         &data, &bytes)
                    : xrt__nomem("a variable's new pieces");
  xrt__vformat f;
  memset(&f, 0, sizeof f);
  f.spec = v->spec;
  f.axes = v->axes;
  f.piece = v->piece;
  f.n = v->n;
  f.devices = v->devices;
  for (int k = 0; !s && k < v->n; k++)
    if (v->bufs[k]) s = xrt__mpv_upload(c, &v->logical, &f, (const char *)data,
                                        k, &nb[k]);
  s = xrt__mpv_agree(c, s, v->key, 0, NULL, "xrt_variable_load");
  for (int k = 0; nb && k < v->n; k++) {
    if (s) {
      xrt_buffer_release(nb[k]);
      continue;
    }
    if (!nb[k]) continue;
    xrt__piece_release(v->bufs[k]);
    v->bufs[k] = nb[k];
  }
  xrt__free(&v->al, nb);
  xrt__free(&v->al, data);
  return s;
}

xrt_status xrt_execute_variables(xrt_executable *executable,
                                 const xrt_variable_arg *args, int num_args,
                                 const int *updates,
                                 xrt_sharded_array **outputs, int num_outputs,
                                 const xrt_execute_options *options) {
  XRT__CHECK_ARG(outputs || num_outputs == 0, "outputs is NULL");
  XRT__CHECK_ARG(num_args >= 0 && num_outputs >= 0 && num_outputs <= 256,
                 "bad argument or output count");
  for (int j = 0; j < num_outputs; j++) outputs[j] = NULL;
  XRT__CHECK_ARG(args || num_args == 0, "args is NULL");
  XRT__CHECK_ARG(num_args <= 64, "more than 64 arguments");
  XRT__CHECK_ARG(xrt__executable_get(executable),
                 "invalid or released executable");
  xrt__xv_call k;
  memset(&k, 0, sizeof k);
  xrt_sharded_array *outs[256] = {NULL};
  xrt_status s = xrt__xv_acquire(args, num_args, &k);
  if (!s) s = xrt__xv_check_updates(executable, &k, num_args, updates,
                                    num_outputs);
  if (!s) {
    xrt__vars_lock(k.uniq, k.nuniq);
    bool mp = xrt__executable_get(executable)->client->mp != NULL;
    s = mp ? xrt__mpv_execute(executable, args, num_args, &k, updates,
                              outputs, num_outputs, options)
           : xrt__xv_views(args, num_args, &k);
    if (!s && !mp) s = xrt__xv_run(executable, &k, num_args, updates, outs,
                                   num_outputs, options);
    for (int j = 0; !s && !mp && j < num_outputs; j++) {
      if (updates && updates[j] >= 0) xrt__xv_donate(k.vars[updates[j]], outs[j]);
      else outputs[j] = outs[j];
    }
    for (int i = 0; i < num_args; i++)
      if (k.views[i]) xrt__sharded_free(k.views[i], false);
    xrt__vars_unlock(k.uniq, k.nuniq);
  }
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  for (int i = 0; i < num_args; i++) xrt__var_unref(k.vars[i]);
  return xrt__restore_error(&err);
}

/* ---- .npy files ---- */

xrt_status xrt_variable_save(xrt_variable *variable, const char *path) {
  XRT__CHECK_ARG(path, "path is NULL");
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  if (v->client->mp) return xrt__mpv_save(v, path); /* closes v */
  xrt_shape shape = v->logical;
  size_t bytes = xrt_shape_bytes(&shape);
  xrt_allocator a = v->al; /* v may go once closed */
  void *data = xrt__alloc(&a, bytes ? bytes : 1);
  s = data ? xrt__var_read(v, data, bytes)
           : xrt__nomem("a variable's host copy");
  xrt__var_close(v);
  size_t n = strlen(path) + 16;
  char *tmp = (char *)xrt__alloc(&a, n);
  bool made = false;
  char why[512];
  int err;
  if (!s && !tmp) {
    s = xrt__nomem("a temporary file name");
  } else if (!s) {
    /* Beside path, so that the rename stays in one file system. */
    snprintf(tmp, n, "%s.tmpXXXXXX", path);
    if ((err = xrt__os_temp_file(tmp, why, sizeof why)))
      s = xrt__fail(err == ENOENT ? XRT_NOT_FOUND : XRT_INVALID_ARGUMENT,
                    "%s: cannot create a temporary file beside it: %s", path,
                    why);
    else made = true;
  }
  if (!s && !(s = xrt__npy_write_host(tmp, &shape, data, bytes)) &&
      xrt__os_replace_file(tmp, path, why, sizeof why) != 0) {
    s = xrt__fail(XRT_DATA_LOSS, "%s: cannot rename %s over it: %s", path,
                  tmp, why);
  }
  if (s && made) remove(tmp);
  xrt__free(&a, tmp);
  xrt__free(&a, data);
  return s;
}

/* Reads a .npy file that must hold an array of shape want. */
static xrt_status xrt__var_read_npy(const xrt__var *v, const char *path,
                                    const xrt_shape *want, void **data) {
  xrt_shape have;
  size_t bytes;
  return xrt__npy_read_host(&v->al, path, want, &have, data, &bytes);
}

xrt_status xrt_variable_load(xrt_variable *variable, const char *path) {
  XRT__CHECK_ARG(path, "path is NULL");
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  if (v->client->mp) { /* across processes */
    s = xrt__mpv_load(v, path);
    xrt__var_close(v);
    return s;
  }
  void *data = NULL;
  xrt_sharded_array *arr = NULL;
  s = xrt__var_read_npy(v, path, &v->logical, &data);
  if (!s)
    s = xrt_sharded_array_from_host((xrt_client *)v->client->handle,
                                    &v->logical, data, &v->spec, v->devices,
                                    v->n, &arr);
  if (!s) { /* the new pieces replace the old ones only now */
    xrt__sharded *a = xrt__sharded_get(arr);
    for (int k = 0; k < v->n; k++) {
      xrt__piece_release(v->bufs[k]);
      v->bufs[k] = a->bufs[k];
    }
    xrt__sharded_free(a, false);
  }
  xrt_allocator al = v->al;
  xrt__var_close(v);
  xrt__free(&al, data);
  return s;
}

xrt_status xrt_variable_create_from_npy(xrt_client *client, const char *name,
                                        const char *path,
                                        const xrt_variable_format *format,
                                        xrt_variable **out_variable) {
  XRT__CHECK_ARG(out_variable, "out_variable is NULL");
  *out_variable = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(path, "path is NULL");
  xrt_shape shape;
  void *data = NULL;
  size_t bytes;
  xrt_status s = xrt__npy_read_host(&c->allocator, path, NULL, &shape, &data,
                                    &bytes);
  if (!s) s = xrt_variable_create(client, name, &shape, data, format,
                                  out_variable);
  xrt__free(&c->allocator, data);
  return s;
}

/* ======================================================================
 * 14. NumPy files
 * ==================================================================== */

/* ======================================================================
 * .npy files (NumPy's array format, versions 1.0, 2.0 and 3.0)
 *
 * A file is: "\x93NUMPY", a major and minor version byte, the header length
 * (2 bytes little-endian in v1, 4 bytes in v2/v3), a Python dict literal
 * such as {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline, then the raw elements.  Only the public
 * buffer API is used here, so this file depends on nothing else in xrt.c
 * except xrt__fail.
 * ==================================================================== */

/* Uses <errno.h>, <stdio.h>, <stdlib.h> and <string.h>, included at the top
 * of xrt.c. */

#define XRT__NPY_MAGIC "\x93NUMPY"
#define XRT__NPY_MAGIC_LEN 6
/* numpy itself refuses headers above 10000 bytes by default; anything much
 * larger than that is a hostile or broken file, not an array. */
#define XRT__NPY_MAX_HEADER (1u << 20)

/* npy stores little-endian data and so does xrt; a big-endian host would
 * need byte swapping that is not written yet. */
static int xrt__npy_host_is_little(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* The descr codes xrt reads and writes, without the byte-order character. */
typedef struct xrt__npy_code {
  const char *code;
  xrt_dtype dtype;
} xrt__npy_code;

static const xrt__npy_code xrt__npy_codes[] = {
    {"b1", XRT_PRED}, {"i1", XRT_S8},   {"i2", XRT_S16}, {"i4", XRT_S32},
    {"i8", XRT_S64},  {"u1", XRT_U8},   {"u2", XRT_U16}, {"u4", XRT_U32},
    {"u8", XRT_U64},  {"f2", XRT_F16},  {"f4", XRT_F32}, {"f8", XRT_F64},
    {"c8", XRT_C64},  {"c16", XRT_C128},
};

/* ---- reading ---- */

/* A cursor over the header dict text. */
typedef struct xrt__npy_lex {
  const char *p, *end;
} xrt__npy_lex;

static void xrt__npy_skip_ws(xrt__npy_lex *lx) {
  while (lx->p < lx->end &&
         (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' || *lx->p == '\r'))
    lx->p++;
}

/* Consumes c (after blanks) if it is next; returns whether it was. */
static int xrt__npy_accept(xrt__npy_lex *lx, char c) {
  xrt__npy_skip_ws(lx);
  if (lx->p < lx->end && *lx->p == c) {
    lx->p++;
    return 1;
  }
  return 0;
}

/* A quoted Python string without escapes (npy never needs them): sets
 * *s and *n to its contents. */
static int xrt__npy_string(xrt__npy_lex *lx, const char **s, size_t *n) {
  xrt__npy_skip_ws(lx);
  if (lx->p >= lx->end || (*lx->p != '\'' && *lx->p != '"')) return 0;
  char q = *lx->p++;
  const char *start = lx->p;
  while (lx->p < lx->end && *lx->p != q) {
    if (*lx->p == '\\' || *lx->p == '\n') return 0;
    lx->p++;
  }
  if (lx->p >= lx->end) return 0;
  *s = start;
  *n = (size_t)(lx->p - start);
  lx->p++;
  return 1;
}

static int xrt__npy_word(xrt__npy_lex *lx, const char *w) {
  size_t n = strlen(w);
  xrt__npy_skip_ws(lx);
  if ((size_t)(lx->end - lx->p) < n || memcmp(lx->p, w, n) != 0) return 0;
  lx->p += n;
  return 1;
}

/* What the header dict says, before it is checked against xrt's types. */
typedef struct xrt__npy_header {
  char descr[16];
  int have_descr, have_order, have_shape;
  int fortran;
  xrt_shape shape;
} xrt__npy_header;

/* Parses a non-negative decimal dimension, refusing overflow. */
static int xrt__npy_dim(xrt__npy_lex *lx, int64_t *out) {
  xrt__npy_skip_ws(lx);
  if (lx->p >= lx->end || *lx->p < '0' || *lx->p > '9') return 0;
  int64_t v = 0;
  while (lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9') {
    int d = *lx->p++ - '0';
    if (v > (INT64_MAX - d) / 10) return 0;
    v = v * 10 + d;
  }
  /* Python 2 era writers put an L after longs: (3L, 4L). */
  if (lx->p < lx->end && *lx->p == 'L') lx->p++;
  *out = v;
  return 1;
}

/* The shape tuple: (), (3,), (2, 3) or (2, 3,).  Returns a static reason on
 * failure, NULL on success. */
static const char *xrt__npy_shape(xrt__npy_lex *lx, xrt_shape *shape) {
  if (!xrt__npy_accept(lx, '(')) return "'shape' is not a tuple";
  shape->rank = 0;
  if (xrt__npy_accept(lx, ')')) return NULL;
  for (;;) {
    xrt__npy_skip_ws(lx);
    if (lx->p < lx->end && *lx->p == '-') return "'shape' has a negative dimension";
    int64_t d;
    if (!xrt__npy_dim(lx, &d)) return "'shape' has a dimension that is not a valid integer";
    if (shape->rank >= XRT_MAX_RANK) return "rank";
    shape->dims[shape->rank++] = d;
    if (xrt__npy_accept(lx, ')')) return NULL;
    if (!xrt__npy_accept(lx, ',')) return "'shape' is not a tuple of integers";
    if (xrt__npy_accept(lx, ')')) return NULL;
  }
}

/* Parses the header dict into *h.  On failure returns a message (static or
 * in why[]) for the caller to report with the path. */
static const char *xrt__npy_parse_dict(const char *text, size_t len,
                                       xrt__npy_header *h) {
  xrt__npy_lex lx = {text, text + len};
  memset(h, 0, sizeof *h);
  if (!xrt__npy_accept(&lx, '{')) return "header is not a dict";
  while (!xrt__npy_accept(&lx, '}')) {
    const char *key;
    size_t klen;
    if (!xrt__npy_string(&lx, &key, &klen)) return "header dict has a malformed key";
    if (!xrt__npy_accept(&lx, ':')) return "header dict is missing a ':'";
    if (klen == 5 && memcmp(key, "descr", 5) == 0) {
      const char *v;
      size_t vlen;
      xrt__npy_skip_ws(&lx);
      if (lx.p < lx.end && lx.p[0] == '[') return "structured";
      if (!xrt__npy_string(&lx, &v, &vlen)) return "'descr' is not a string";
      if (vlen >= sizeof h->descr) vlen = sizeof h->descr - 1; /* still names it */
      memcpy(h->descr, v, vlen);
      h->descr[vlen] = 0;
      h->have_descr = 1;
    } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
      if (xrt__npy_word(&lx, "True")) h->fortran = 1;
      else if (xrt__npy_word(&lx, "False")) h->fortran = 0;
      else return "'fortran_order' is not True or False";
      h->have_order = 1;
    } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
      const char *why = xrt__npy_shape(&lx, &h->shape);
      if (why) return why;
      h->have_shape = 1;
    } else {
      return "header dict has an unknown key";
    }
    if (xrt__npy_accept(&lx, '}')) break;
    if (!xrt__npy_accept(&lx, ',')) return "header dict is missing a ','";
  }
  xrt__npy_skip_ws(&lx);
  if (lx.p != lx.end) return "header has text after the dict";
  if (!h->have_descr) return "header has no 'descr'";
  if (!h->have_order) return "header has no 'fortran_order'";
  if (!h->have_shape) return "header has no 'shape'";
  return NULL;
}

/* Maps a descr string to a dtype, or fails naming it. */
static xrt_status xrt__npy_dtype(const char *path, const char *descr,
                                 xrt_dtype *out) {
  char order = descr[0];
  const char *code = descr + 1;
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return xrt__fail(XRT_INVALID_ARGUMENT,
                     "%s: 'descr' '%s' has no byte-order character", path, descr);
  for (size_t i = 0; i < sizeof xrt__npy_codes / sizeof xrt__npy_codes[0]; i++) {
    if (strcmp(code, xrt__npy_codes[i].code) != 0) continue;
    xrt_dtype t = xrt__npy_codes[i].dtype;
    /* Byte order is meaningless for one-byte types; otherwise only
     * little-endian (or native on a little-endian host) is read. */
    if (xrt_dtype_size(t) > 1 && order == '>')
      return xrt__fail(XRT_UNIMPLEMENTED,
                       "%s: big-endian data ('%s') is not supported", path, descr);
    *out = t;
    return XRT_OK;
  }
  return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy dtype '%s' is not supported",
                   path, descr);
}

/* Reads exactly n bytes or explains why not. */
static xrt_status xrt__npy_read(FILE *f, const char *path, void *dst, size_t n,
                                const char *what) {
  if (n == 0) return XRT_OK;
  size_t got = fread(dst, 1, n, f);
  if (got == n) return XRT_OK;
  if (ferror(f))
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: cannot read %s: %s", path, what,
                     errno ? strerror(errno) : "read error");
  return xrt__fail(XRT_INVALID_ARGUMENT,
                   "%s: file is truncated: %s needs %zu bytes, only %zu present",
                   path, what, n, got);
}

/* Reads the magic, version and header dict, leaving f at the data; the
 * header's text is read into memory from a. */
static xrt_status xrt__npy_read_header(const xrt_allocator *a, FILE *f,
                                       const char *path, xrt__npy_header *h) {
  unsigned char pre[XRT__NPY_MAGIC_LEN + 2];
  errno = 0;
  size_t got = fread(pre, 1, sizeof pre, f);
  if (got != sizeof pre) {
    if (ferror(f))
      return xrt__fail(XRT_INVALID_ARGUMENT, "%s: cannot read: %s", path,
                       errno ? strerror(errno) : "read error");
    size_t m = got < XRT__NPY_MAGIC_LEN ? got : XRT__NPY_MAGIC_LEN;
    if (got == 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "%s: not a .npy file (empty)", path);
    if (memcmp(pre, XRT__NPY_MAGIC, m) != 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", path);
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: file is truncated in the preamble", path);
  }
  if (memcmp(pre, XRT__NPY_MAGIC, XRT__NPY_MAGIC_LEN) != 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", path);
  int major = pre[XRT__NPY_MAGIC_LEN];
  if (major < 1 || major > 3)
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy format version %d.%d is not supported",
                     path, major, pre[XRT__NPY_MAGIC_LEN + 1]);
  unsigned char lenb[4] = {0, 0, 0, 0};
  size_t lenn = major == 1 ? 2 : 4;
  xrt_status s = xrt__npy_read(f, path, lenb, lenn, "the header length");
  if (s) return s;
  uint32_t hlen = (uint32_t)lenb[0] | (uint32_t)lenb[1] << 8 |
                  (uint32_t)lenb[2] << 16 | (uint32_t)lenb[3] << 24;
  if (hlen > XRT__NPY_MAX_HEADER)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: header length %lu is implausibly large",
                     path, (unsigned long)hlen);
  char *text = (char *)xrt__alloc(a, hlen ? hlen : 1);
  if (!text)
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: out of host memory for "
                     "the %lu-byte header", path, (unsigned long)hlen);
  s = xrt__npy_read(f, path, text, hlen, "the header");
  if (!s) {
    const char *why = xrt__npy_parse_dict(text, hlen, h);
    if (why && strcmp(why, "structured") == 0)
      s = xrt__fail(XRT_UNIMPLEMENTED, "%s: structured npy dtypes are not supported", path);
    else if (why && strcmp(why, "rank") == 0)
      s = xrt__fail(XRT_UNIMPLEMENTED, "%s: rank above %d is not supported", path,
                    XRT_MAX_RANK);
    else if (why)
      s = xrt__fail(XRT_INVALID_ARGUMENT, "%s: bad npy header: %s", path, why);
  }
  xrt__free(a, text);
  return s;
}

/* Whether the open file holds at least bytes more bytes: checked before
 * the data is allocated, so a short file cannot make xrt allocate what its
 * header claims. */
static xrt_status xrt__npy_check_size(FILE *f, const char *path,
                                      size_t bytes) {
  long here = ftell(f);
  if (here < 0 || fseek(f, 0, SEEK_END) != 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: cannot seek in the file",
                     path);
  long end = ftell(f);
  if (end < 0 || fseek(f, here, SEEK_SET) != 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: cannot seek in the file",
                     path);
  if ((uint64_t)(end - here) < (uint64_t)bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: truncated: the header "
                     "declares %zu bytes of data, the file holds %ld", path,
                     bytes, end - here);
  return XRT_OK;
}

/* Checks the header against what xrt can hold and fills h->shape.dtype;
 * *bytes receives the data size (xrt__npy_check_size checks the file
 * holds it, before anything is allocated). */
static xrt_status xrt__npy_check(const char *path, xrt__npy_header *h,
                                 size_t *bytes) {
  if (h->fortran)
    return xrt__fail(XRT_UNIMPLEMENTED,
                     "%s: fortran_order arrays are not supported (save in C order)", path);
  xrt_status s = xrt__npy_dtype(path, h->descr, &h->shape.dtype);
  if (s) return s;
  /* The byte count must fit size_t and the element count int64. */
  size_t esize = xrt_dtype_size(h->shape.dtype);
  uint64_t total = esize; /* over the nonzero dimensions, as in
                            xrt__shape_check: strides must not overflow */
  bool empty = false;
  for (int32_t i = 0; i < h->shape.rank; i++) {
    uint64_t d = (uint64_t)h->shape.dims[i];
    if (d == 0) { empty = true; continue; }
    if (total > (uint64_t)INT64_MAX / d)
      return xrt__fail(XRT_INVALID_ARGUMENT, "%s: shape is too large (overflows)", path);
    total *= d;
  }
  if (total > (uint64_t)SIZE_MAX / 2)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: shape is too large for this host", path);
  *bytes = empty ? 0 : (size_t)total;
  return XRT_OK;
}

/* Reads an opened file's array onto device (host memory from the
 * client's allocator). */
static xrt_status xrt__npy_load(FILE *f, xrt_client *client, xrt_device *device,
                                const char *path, xrt_buffer **out) {
  const xrt_allocator *a = &xrt__client_get(client)->allocator;
  xrt__npy_header h;
  size_t bytes = 0;
  xrt_status s = xrt__npy_read_header(a, f, path, &h);
  if (!s) s = xrt__npy_check(path, &h, &bytes);
  if (!s) s = xrt__npy_check_size(f, path, bytes);
  if (s) return s;
  void *data = NULL;
  if (bytes) {
    data = xrt__alloc(a, bytes);
    if (!data)
      return xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: cannot allocate %zu bytes", path, bytes);
  }
  s = xrt__npy_read(f, path, data, bytes, "the array data");
  if (!s && h.shape.dtype == XRT_PRED) {
    /* numpy writes 0/1, but xrt's pred must be exactly 0 or 1. */
    unsigned char *b = data;
    for (size_t i = 0; i < bytes; i++) b[i] = b[i] != 0;
  }
  if (!s) s = xrt_buffer_from_host(client, device, &h.shape, data, out);
  xrt__free(a, data);
  return s;
}

xrt_status xrt_buffer_from_npy(xrt_client *client, xrt_device *device,
                               const char *path, xrt_buffer **out_buffer) {
  if (out_buffer) *out_buffer = NULL;
  if (!path || !out_buffer)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_npy: %s is NULL",
                     path ? "out_buffer" : "path");
  /* Bad handles are reported before the file is touched. */
  if (xrt_client_device_count(client) < 0 || xrt_device_id(device) < 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_npy: invalid %s",
                     xrt_client_device_count(client) < 0 ? "client" : "device");
  if (!xrt__npy_host_is_little())
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy on a big-endian host", path);
  errno = 0;
  FILE *f = xrt__os_fopen(path, "rb");
  if (!f) {
    int e = errno;
    xrt_status code = e == ENOENT ? XRT_NOT_FOUND
                      : e == EACCES ? XRT_PERMISSION_DENIED
                                    : XRT_INVALID_ARGUMENT;
    return xrt__fail(code, "%s: cannot open: %s", path,
                     e ? strerror(e) : "unknown error");
  }
  xrt_status s = xrt__npy_load(f, client, device, path, out_buffer);
  fclose(f); /* read-only: nothing to lose if closing fails */
  return s;
}

/* ---- writing ---- */

/* The descr for a dtype, or NULL if npy has no code for it. */
static const char *xrt__npy_descr(xrt_dtype t) {
  switch (t) {
  case XRT_PRED: return "|b1";
  case XRT_S8: return "|i1";
  case XRT_U8: return "|u1";
  case XRT_S16: return "<i2";
  case XRT_S32: return "<i4";
  case XRT_S64: return "<i8";
  case XRT_U16: return "<u2";
  case XRT_U32: return "<u4";
  case XRT_U64: return "<u8";
  case XRT_F16: return "<f2";
  case XRT_F32: return "<f4";
  case XRT_F64: return "<f8";
  case XRT_C64: return "<c8";
  case XRT_C128: return "<c16";
  default: return NULL;
  }
}

/* Formats the v1.0 preamble and header dict into buf (cap >= 512 bytes
 * holds any rank up to XRT_MAX_RANK); returns its length, a multiple of 64
 * as numpy writes it so that the data is aligned. */
static size_t xrt__npy_format_header(const xrt_shape *shape, const char *descr,
                                     char *buf, size_t cap) {
  char dict[480];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   descr);
  for (int32_t i = 0; i < shape->rank; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                  (long long)shape->dims[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", shape->rank == 1 ? "," : "");
  size_t body = (size_t)n + 1; /* + the final newline */
  size_t total = (XRT__NPY_MAGIC_LEN + 4 + body + 63) / 64 * 64;
  size_t hlen = total - XRT__NPY_MAGIC_LEN - 4;
  if (total > cap) return 0;
  memcpy(buf, XRT__NPY_MAGIC, XRT__NPY_MAGIC_LEN);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (char)(hlen & 0xff);
  buf[9] = (char)(hlen >> 8);
  memcpy(buf + 10, dict, (size_t)n);
  memset(buf + 10 + n, ' ', hlen - (size_t)n - 1);
  buf[total - 1] = '\n';
  return total;
}

/* Writes header and data to path; on any failure the partial file is
 * removed so a half-written array never looks valid. */
static xrt_status xrt__npy_write_file(const char *path, const char *hdr,
                                      size_t hlen, const void *data,
                                      size_t bytes) {
  errno = 0;
  FILE *f = xrt__os_fopen(path, "wb");
  if (!f) {
    int e = errno;
    return xrt__fail(e == ENOENT ? XRT_NOT_FOUND
                     : e == EACCES ? XRT_PERMISSION_DENIED
                                   : XRT_INVALID_ARGUMENT,
                     "%s: cannot create: %s", path, e ? strerror(e) : "unknown error");
  }
  int ok = fwrite(hdr, 1, hlen, f) == hlen;
  if (ok && bytes) ok = fwrite(data, 1, bytes, f) == bytes;
  int e = errno;
  if (fclose(f) != 0 && ok) {
    ok = 0;
    e = errno;
  }
  if (ok) return XRT_OK;
  remove(path);
  return xrt__fail(XRT_DATA_LOSS, "%s: write failed: %s", path,
                   e ? strerror(e) : "unknown error");
}

xrt_status xrt_buffer_to_npy(xrt_buffer *buffer, const char *path) {
  if (!path) return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_to_npy: path is NULL");
  xrt_shape shape;
  xrt_status s = xrt_buffer_shape(buffer, &shape);
  if (s) return s;
  if (!xrt__npy_host_is_little())
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy on a big-endian host", path);
  const char *descr = xrt__npy_descr(shape.dtype);
  if (!descr)
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: element type %s has no npy dtype", path,
                     xrt_dtype_name(shape.dtype));
  char hdr[576];
  size_t hlen = xrt__npy_format_header(&shape, descr, hdr, sizeof hdr);
  if (!hlen) return xrt__fail(XRT_INTERNAL, "%s: npy header too long", path);
  size_t bytes = xrt_buffer_bytes(buffer);
  xrt__buffer *b = xrt__buffer_acquire(buffer); /* for its client's allocator */
  if (!b) return xrt__fail(XRT_INVALID_ARGUMENT, "%s: invalid buffer", path);
  xrt_allocator a = b->client->allocator;
  xrt__buffer_unref(b);
  void *data = NULL;
  if (bytes) {
    data = xrt__alloc(&a, bytes);
    if (!data)
      return xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: cannot allocate %zu bytes", path, bytes);
    s = xrt_buffer_to_host(buffer, data, bytes);
  }
  if (!s) s = xrt__npy_write_file(path, hdr, hlen, data, bytes);
  xrt__free(&a, data);
  return s;
}

/* For variables (13c): reads a whole .npy file into malloc'd host memory
 * (*data, which the caller frees) and gives its shape, which must equal
 * want (if not NULL: checked before the data is read). */
static xrt_status xrt__npy_read_host(const xrt_allocator *a, const char *path,
                                     const xrt_shape *want, xrt_shape *shape,
                                     void **data, size_t *bytes) {
  *data = NULL;
  if (!xrt__npy_host_is_little())
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy on a big-endian host", path);
  errno = 0;
  FILE *f = xrt__os_fopen(path, "rb");
  if (!f)
    return xrt__fail(errno == ENOENT ? XRT_NOT_FOUND : XRT_INVALID_ARGUMENT,
                     "%s: cannot open: %s", path,
                     errno ? strerror(errno) : "unknown error");
  xrt__npy_header h;
  xrt_status s = xrt__npy_read_header(a, f, path, &h);
  if (!s) s = xrt__npy_check(path, &h, bytes);
  if (!s && want && !xrt__shape_equal(&h.shape, want)) {
    char have_s[128], want_s[128];
    xrt_shape_format(&h.shape, have_s, sizeof have_s);
    xrt_shape_format(want, want_s, sizeof want_s);
    s = xrt__fail(XRT_INVALID_ARGUMENT, "%s holds %s, the variable is %s",
                  path, have_s, want_s);
  }
  if (!s) s = xrt__npy_check_size(f, path, *bytes);
  if (!s && *bytes && !(*data = xrt__alloc(a, *bytes)))
    s = xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: cannot allocate %zu bytes",
                  path, *bytes);
  if (!s) s = xrt__npy_read(f, path, *data, *bytes, "the array data");
  fclose(f);
  if (s) {
    xrt__free(a, *data);
    *data = NULL;
    return s;
  }
  *shape = h.shape;
  if (shape->dtype == XRT_PRED) /* as xrt__npy_load: exactly 0 or 1 */
    for (size_t i = 0; i < *bytes; i++)
      ((unsigned char *)*data)[i] = ((unsigned char *)*data)[i] != 0;
  return XRT_OK;
}

/* For variables (13c): writes host data of shape as a .npy file. */
static xrt_status xrt__npy_write_host(const char *path, const xrt_shape *shape,
                                      const void *data, size_t bytes) {
  if (!xrt__npy_host_is_little())
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy on a big-endian host", path);
  const char *descr = xrt__npy_descr(shape->dtype);
  if (!descr)
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: element type %s has no npy "
                     "dtype", path, xrt_dtype_name(shape->dtype));
  char hdr[576];
  size_t hlen = xrt__npy_format_header(shape, descr, hdr, sizeof hdr);
  if (!hlen) return xrt__fail(XRT_INTERNAL, "%s: npy header too long", path);
  return xrt__npy_write_file(path, hdr, hlen, data, bytes);
}

/* ======================================================================
 * 15. DLPack
 *
 * xrt.c does not include dlpack.h, so that vendoring xrt needs no extra
 * header: the structs below are private copies of DLPack 0.x's DLDevice,
 * DLDataType, DLTensor and DLManagedTensor, layout-identical (DLPack keeps
 * that ABI stable; test/test_dlpack.c checks the copies against dlpack.h).
 *
 * Export.  When the plugin's memory is host-addressable the tensor points
 * into the buffer: its manager context, an export record, holds a
 * reference to the buffer, so the memory outlives xrt_buffer_release
 * until the deleter runs.  Records of such exports are on one global list
 * for two reasons: client release, which frees every buffer whatever its
 * count, first orphans its records (their deleter then only frees the
 * record), and an import of memory that a live export shares with a
 * buffer of the same device is copied, not wrapped (a plugin names device
 * memory by its address, so it could not tell the two apart).  Otherwise
 * the data is copied into a block the record owns.
 *
 * Import.  Dense row-major tensors are wrapped when the plugin can adopt
 * host memory (buffer_wrap_host): the buffer keeps the tensor in b->dl
 * and xrt__dlpack_freed calls its deleter after the plugin's buffer_free.
 * Otherwise the data is copied (strided tensors are gathered into a dense
 * block first) and the deleter runs before the import returns.
 * ==================================================================== */

/* DLDeviceType and DLDataTypeCode values.  kDLBool is DLPack 0.8's code
 * (absent from 0.6, same ABI): pred maps to it, as NumPy, PyTorch and JAX
 * do. */
enum { XRT__DL_CPU = 1, XRT__DL_CUDA_HOST = 3 };
enum { XRT__DL_INT = 0, XRT__DL_UINT = 1, XRT__DL_FLOAT = 2,
       XRT__DL_BFLOAT = 4, XRT__DL_COMPLEX = 5, XRT__DL_BOOL = 6 };

typedef struct xrt__dl_device {
  int device_type; /* DLDeviceType: an enum, int-sized */
  int device_id;
} xrt__dl_device;

typedef struct xrt__dl_dtype {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} xrt__dl_dtype;

typedef struct xrt__dl_tensor {
  void *data;
  xrt__dl_device device;
  int ndim;
  xrt__dl_dtype dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL: dense row-major */
  uint64_t byte_offset;
} xrt__dl_tensor;

struct DLManagedTensor {
  xrt__dl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
};

/* The layout DLPack documents, where it is easy to state (LP64). */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(offsetof(xrt__dl_tensor, device) == 8 &&
                   offsetof(xrt__dl_tensor, ndim) == 16 &&
                   offsetof(xrt__dl_tensor, dtype) == 20 &&
                   offsetof(xrt__dl_tensor, shape) == 24 &&
                   offsetof(xrt__dl_tensor, strides) == 32 &&
                   offsetof(xrt__dl_tensor, byte_offset) == 40 &&
                   sizeof(xrt__dl_tensor) == 48,
               "DLTensor layout");
_Static_assert(offsetof(struct DLManagedTensor, manager_ctx) == 48 &&
                   offsetof(struct DLManagedTensor, deleter) == 56 &&
                   sizeof(struct DLManagedTensor) == 64,
               "DLManagedTensor layout");
#endif

static const struct {
  xrt_dtype type;
  uint8_t code, bits;
} xrt__dl_types[] = {
    {XRT_PRED, XRT__DL_BOOL, 8},      {XRT_S8, XRT__DL_INT, 8},
    {XRT_S16, XRT__DL_INT, 16},       {XRT_S32, XRT__DL_INT, 32},
    {XRT_S64, XRT__DL_INT, 64},       {XRT_U8, XRT__DL_UINT, 8},
    {XRT_U16, XRT__DL_UINT, 16},      {XRT_U32, XRT__DL_UINT, 32},
    {XRT_U64, XRT__DL_UINT, 64},      {XRT_F16, XRT__DL_FLOAT, 16},
    {XRT_F32, XRT__DL_FLOAT, 32},     {XRT_F64, XRT__DL_FLOAT, 64},
    {XRT_BF16, XRT__DL_BFLOAT, 16},   {XRT_C64, XRT__DL_COMPLEX, 64},
    {XRT_C128, XRT__DL_COMPLEX, 128},
};

static xrt_status xrt__dl_dtype_of(xrt_dtype t, xrt__dl_dtype *out) {
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__dl_types); i++)
    if (xrt__dl_types[i].type == t) {
      out->code = xrt__dl_types[i].code;
      out->bits = xrt__dl_types[i].bits;
      out->lanes = 1;
      return XRT_OK;
    }
  return xrt__fail(XRT_UNIMPLEMENTED, "DLPack has no element type for %s",
                   xrt_dtype_name(t));
}

static xrt_status xrt__dl_xrt_dtype(xrt__dl_dtype dt, xrt_dtype *out) {
  if (dt.lanes != 1)
    return xrt__fail(XRT_UNIMPLEMENTED, "xrt_buffer_from_dlpack: vector types "
                     "(%u lanes) are not supported", (unsigned)dt.lanes);
  for (size_t i = 0; i < XRT__ARRAY_SIZE(xrt__dl_types); i++)
    if (xrt__dl_types[i].code == dt.code && xrt__dl_types[i].bits == dt.bits) {
      *out = xrt__dl_types[i].type;
      return XRT_OK;
    }
  return xrt__fail(XRT_UNIMPLEMENTED, "xrt_buffer_from_dlpack: DLPack type "
                   "code %u with %u bits has no xrt element type",
                   (unsigned)dt.code, (unsigned)dt.bits);
}

/* ---- Export ---------------------------------------------------------- */

/* The manager context of an exported tensor.  A zero-copy export is on
 * xrt__dl_live while buf is set; a copying one's data follows the record
 * (at XRT__DL_DATA_AT). */
typedef struct xrt__dl_export {
  struct DLManagedTensor t;
  xrt__link link;
  xrt__buffer *buf; /* the reference keeping the memory, or NULL */
  size_t bytes;
  int64_t shape[XRT_MAX_RANK], strides[XRT_MAX_RANK];
} xrt__dl_export;

#define XRT__DL_ALIGN 64
#define XRT__DL_DATA_AT \
  ((sizeof(xrt__dl_export) + XRT__DL_ALIGN - 1) & ~(size_t)(XRT__DL_ALIGN - 1))

static pthread_mutex_t xrt__dl_mu = PTHREAD_MUTEX_INITIALIZER;
static xrt__link xrt__dl_live = {&xrt__dl_live, &xrt__dl_live};

/* The deleter of exported tensors.  The buffer is dropped outside the
 * lock: it may be a zero-copy import whose own deleter is this one. */
static void xrt__dl_export_delete(struct DLManagedTensor *t) {
  if (!t) return;
  xrt__dl_export *x = (xrt__dl_export *)t->manager_ctx;
  pthread_mutex_lock(&xrt__dl_mu);
  xrt__buffer *b = x->buf;
  if (b) xrt__link_remove(&x->link);
  x->buf = NULL;
  pthread_mutex_unlock(&xrt__dl_mu);
  xrt__buffer_unref(b);
  xrt__os_aligned_free(x);
}

/* A record for b's tensor, with room for its data when copy is set. */
static xrt_status xrt__dl_export_new(const xrt__buffer *b, bool copy,
                                     xrt__dl_export **out) {
  xrt__dl_dtype dt;
  xrt_status s = xrt__dl_dtype_of(b->shape.dtype, &dt);
  if (s) return s;
  size_t size = XRT__DL_DATA_AT + (copy ? b->bytes : 0);
  size = (size + XRT__DL_ALIGN - 1) & ~(size_t)(XRT__DL_ALIGN - 1);
  xrt__dl_export *x = (xrt__dl_export *)xrt__os_aligned_alloc(XRT__DL_ALIGN,
                                                               size);
  if (!x) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of host memory for "
                           "a DLPack tensor of %zu bytes", b->bytes);
  memset(x, 0, sizeof *x);
  xrt__link_init(&x->link);
  x->bytes = b->bytes;
  int rank = b->shape.rank;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; i--) {
    x->shape[i] = b->shape.dims[i];
    x->strides[i] = stride;
    stride *= b->shape.dims[i] ? b->shape.dims[i] : 1;
  }
  xrt__dl_tensor *dl = &x->t.dl_tensor;
  dl->data = copy ? (char *)x + XRT__DL_DATA_AT : NULL;
  dl->device.device_type = XRT__DL_CPU;
  dl->device.device_id = 0;
  dl->ndim = rank;
  dl->dtype = dt;
  dl->shape = x->shape;
  dl->strides = x->strides; /* explicit: some consumers reject NULL */
  dl->byte_offset = 0;
  x->t.manager_ctx = x;
  x->t.deleter = xrt__dl_export_delete;
  *out = x;
  return XRT_OK;
}

/* Waits for b's producer; a poisoned buffer gives its error. */
static xrt_status xrt__dl_wait_ready(const xrt__buffer *b) {
  if (!b->ready) return XRT_OK;
  xrt_status s = xrt__event_wait(b->ready);
  return s ? xrt__fail(s, "%s", b->ready->message) : XRT_OK;
}

/* The host address of b's memory, or NULL if the plugin has none. */
static void *xrt__dl_host_pointer(const xrt__buffer *b) {
  const xrt__client *c = b->client;
  if (!c->api->buffer_host_pointer) return NULL;
  return c->api->buffer_host_pointer(c->pc, b->device, b->mem);
}

xrt_status xrt_buffer_to_dlpack(xrt_buffer *buffer,
                                struct DLManagedTensor **out_tensor) {
  XRT__CHECK_ARG(out_tensor, "out_tensor is NULL");
  *out_tensor = NULL;
  xrt__buffer *b = xrt__buffer_acquire(buffer);
  XRT__CHECK_ARG(b, "invalid or released buffer");
  xrt__dl_export *x = NULL;
  void *host = NULL;
  xrt_status s = xrt__dl_wait_ready(b);
  if (!s) host = xrt__dl_host_pointer(b);
  if (!s) s = xrt__dl_export_new(b, !host, &x);
  if (!s && host) { /* the record takes over the acquired reference */
    x->t.dl_tensor.data = host;
    pthread_mutex_lock(&xrt__dl_mu);
    x->buf = b;
    xrt__link_add(&xrt__dl_live, &x->link);
    pthread_mutex_unlock(&xrt__dl_mu);
    b = NULL;
  } else if (!s && x->bytes &&
             (s = xrt_buffer_to_host(buffer, x->t.dl_tensor.data, x->bytes))) {
    xrt__os_aligned_free(x);
  }
  xrt__buffer_unref(b);
  if (s) return s;
  xrt__log(XRT_LOG_DEBUG, "buffer", "DLPack export of %zu bytes (%s)",
           x->bytes, host ? "zero copy" : "copied");
  *out_tensor = &x->t;
  return XRT_OK;
}

/* Client release frees every buffer: tensors exported from them lose
 * their data (the deleter stays safe to call: it only frees the record). */
static void xrt__dlpack_client_gone(xrt__client *c) {
  int orphans = 0;
  pthread_mutex_lock(&xrt__dl_mu);
  for (xrt__link *l = xrt__dl_live.next, *next; l != &xrt__dl_live; l = next) {
    next = l->next;
    xrt__dl_export *x =
        (xrt__dl_export *)(void *)((char *)l - offsetof(xrt__dl_export, link));
    if (x->buf->client != c) continue;
    xrt__link_remove(l);
    x->buf = NULL;
    orphans++;
  }
  pthread_mutex_unlock(&xrt__dl_mu);
  if (orphans)
    xrt__log(XRT_LOG_WARN, "buffer", "client released while %d zero-copy "
             "DLPack tensors exported from it were alive: their data is "
             "freed", orphans);
}

/* Whether [p, p + bytes) overlaps memory of a live zero-copy export of a
 * buffer on device of c. */
static bool xrt__dl_exported(const xrt__client *c, int device, const void *p,
                             size_t bytes) {
  uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
  bool found = false;
  pthread_mutex_lock(&xrt__dl_mu);
  for (xrt__link *l = xrt__dl_live.next; l != &xrt__dl_live && !found;
       l = l->next) {
    const xrt__dl_export *x = (const xrt__dl_export *)(const void *)(
        (const char *)l - offsetof(xrt__dl_export, link));
    uintptr_t xlo = (uintptr_t)x->t.dl_tensor.data, xhi = xlo + x->bytes;
    found = x->buf->client == c && x->buf->device == device && lo < xhi &&
            xlo < hi;
  }
  pthread_mutex_unlock(&xrt__dl_mu);
  return found;
}

/* ---- Import ---------------------------------------------------------- */

/* A validated tensor: its xrt shape, first byte and element strides. */
typedef struct xrt__dl_view {
  xrt_shape shape;
  size_t bytes;
  const char *base;
  const int64_t *strides; /* NULL: dense */
  bool dense;             /* row-major without gaps */
} xrt__dl_view;

/* Strides of a dense row-major array are implied; dimensions of size 1
 * may have any stride (NumPy and PyTorch give them arbitrary ones). */
static bool xrt__dl_is_dense(const xrt_shape *s, const int64_t *strides) {
  if (!strides) return true;
  int64_t want = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    if (s->dims[i] == 0) return true;
    if (s->dims[i] != 1 && strides[i] != want) return false;
    want *= s->dims[i];
  }
  return true;
}

/* Checks that every element's offset from the first, sum(idx[i] *
 * strides[i]), and that times the element size fit an int64 (so the
 * gather cannot overflow): each stride's span and the sums of the
 * positive and of the negative spans stay within XRT__DL_SPAN. */
#define XRT__DL_SPAN (INT64_MAX / 16)

static xrt_status xrt__dl_check_strides(const xrt_shape *s,
                                        const int64_t *strides) {
  int64_t up = 0, down = 0;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] == 0) return XRT_OK; /* empty: nothing is read */
  for (int i = 0; i < s->rank; i++) {
    int64_t st = strides[i], ext = s->dims[i] - 1;
    int64_t mag = st < 0 ? (st == INT64_MIN ? INT64_MAX : -st) : st;
    if (ext && mag > XRT__DL_SPAN / ext)
      return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: stride "
                       "%" PRId64 " of dimension %d is out of range", st, i);
    int64_t *sum = st < 0 ? &down : &up;
    if (*sum > XRT__DL_SPAN - mag * ext)
      return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: the "
                       "strides span more elements than an int64 counts");
    *sum += mag * ext;
  }
  return XRT_OK;
}

static xrt_status xrt__dl_view_of(const xrt__dl_tensor *t, xrt__dl_view *v) {
  memset(v, 0, sizeof *v);
  if (t->device.device_type != XRT__DL_CPU &&
      t->device.device_type != XRT__DL_CUDA_HOST)
    return xrt__fail(XRT_UNIMPLEMENTED, "xrt_buffer_from_dlpack: device type "
                     "%d is not host memory (xrt imports kDLCPU and "
                     "kDLCUDAHost tensors)", t->device.device_type);
  if (t->ndim < 0 || t->ndim > XRT_MAX_RANK)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: ndim %d "
                     "is outside 0..%d", t->ndim, XRT_MAX_RANK);
  if (!t->shape && t->ndim > 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: the "
                     "tensor's shape is NULL");
  xrt_status s = xrt__dl_xrt_dtype(t->dtype, &v->shape.dtype);
  if (s) return s;
  v->shape.rank = t->ndim;
  for (int i = 0; i < t->ndim; i++) v->shape.dims[i] = t->shape[i];
  if ((s = xrt__shape_check(&v->shape, &v->bytes))) return s;
  if (!t->data && v->bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: the "
                     "tensor's data is NULL");
  if (t->data && t->byte_offset > UINTPTR_MAX - (uintptr_t)t->data)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_dlpack: "
                     "byte_offset %" PRIu64 " runs past the address space",
                     t->byte_offset);
  if (t->strides && (s = xrt__dl_check_strides(&v->shape, t->strides)))
    return s;
  v->base = (const char *)t->data + (t->data ? t->byte_offset : 0);
  v->strides = t->strides;
  v->dense = xrt__dl_is_dense(&v->shape, t->strides);
  return XRT_OK;
}

/* Copies a strided view's elements to dst in row-major order, a row (the
 * last dimension) at a time. */
static void xrt__dl_gather(const xrt__dl_view *v, char *dst) {
  const xrt_shape *s = &v->shape;
  size_t es = xrt_dtype_size(s->dtype);
  if (v->bytes == 0) return;
  if (s->rank == 0) {
    memcpy(dst, v->base, es);
    return;
  }
  int r = s->rank - 1;
  int64_t idx[XRT_MAX_RANK] = {0}, off = 0; /* element offset of the row */
  int64_t rows = xrt_shape_numel(s) / s->dims[r], inner = v->strides[r];
  for (int64_t k = 0; k < rows; k++) {
    for (int64_t j = 0; j < s->dims[r]; j++, dst += es)
      memcpy(dst, v->base + (off + j * inner) * (int64_t)es, es);
    for (int i = r - 1; i >= 0; i--) { /* next row */
      if (++idx[i] < s->dims[i]) {
        off += v->strides[i];
        break;
      }
      off -= v->strides[i] * (s->dims[i] - 1);
      idx[i] = 0;
    }
  }
}

/* A buffer over the view's memory if the plugin adopts it; *out stays
 * NULL (XRT_OK) when it declines, so that the caller copies. */
static xrt_status xrt__dl_wrap(xrt__client *c, int device,
                               const xrt__dl_view *v, xrt__buffer **out) {
  *out = NULL;
  if (!c->api->buffer_wrap_host || !v->dense || v->bytes == 0 ||
      xrt__dl_exported(c, device, v->base, v->bytes))
    return XRT_OK;
  xrt__buffer *b = xrt__buffer_obj(c);
  if (!b) return xrt__nomem("a buffer object");
  b->client = c;
  b->device = device;
  b->shape = v->shape;
  b->bytes = v->bytes;
  b->ready = NULL;
  xrt_plugin_error err = {{0}};
  void *host = (void *)(uintptr_t)v->base; /* adopted, never written */
  xrt_status s =
      c->api->buffer_wrap_host(c->pc, device, host, v->bytes, &b->mem, &err);
  if (s) {
    xrt__buffer_recycle(c, b);
    if (s == XRT_UNIMPLEMENTED || s == XRT_FAILED_PRECONDITION) {
      xrt__log(XRT_LOG_DEBUG, "buffer", "DLPack import copies: %s",
               xrt__plugin_msg(&err));
      return XRT_OK;
    }
    return xrt__fail_plugin(s, c->api->name, &err);
  }
  return xrt__buffer_publish(c, b, NULL, out);
}

/* A new buffer holding a copy of the view's elements. */
static xrt_status xrt__dl_copy(xrt_client *client, xrt_device *device,
                               const xrt__dl_view *v, xrt_buffer **out) {
  if (v->dense)
    return xrt_buffer_from_host(client, device, &v->shape, v->base, out);
  const xrt_allocator *a = &xrt__client_get(client)->allocator;
  char *tmp = (char *)xrt__alloc(a, v->bytes);
  if (!tmp) return xrt__fail(XRT_RESOURCE_EXHAUSTED, "out of host memory "
                             "to compact a strided DLPack tensor of %zu "
                             "bytes", v->bytes);
  xrt__dl_gather(v, tmp);
  xrt_status s = xrt_buffer_from_host(client, device, &v->shape, tmp, out);
  xrt__free(a, tmp);
  return s;
}

xrt_status xrt_buffer_from_dlpack(xrt_client *client, xrt_device *device,
                                  struct DLManagedTensor *tensor,
                                  xrt_buffer **out_buffer) {
  XRT__CHECK_ARG(out_buffer, "out_buffer is NULL");
  *out_buffer = NULL;
  xrt__client *c = xrt__client_get(client);
  xrt__device *d = xrt__device_get(device);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(d, "invalid device");
  XRT__CHECK_ARG(d->client == c, "device belongs to another client");
  XRT__CHECK_ARG(tensor, "tensor is NULL");
  xrt__dl_view v;
  xrt_status s = xrt__dl_view_of(&tensor->dl_tensor, &v);
  xrt__buffer *b = NULL;
  if (!s) s = xrt__dl_wrap(c, d->index, &v, &b);
  if (s) return s;
  if (b) { /* zero copy: the deleter runs when the memory is freed */
    b->dl = tensor;
    *out_buffer = (xrt_buffer *)b->handle;
    xrt__log(XRT_LOG_DEBUG, "buffer", "DLPack import of %zu bytes (zero "
             "copy)", v.bytes);
    return XRT_OK;
  }
  if ((s = xrt__dl_copy(client, device, &v, out_buffer))) return s;
  xrt__log(XRT_LOG_DEBUG, "buffer", "DLPack import of %zu bytes (copied)",
           v.bytes);
  if (tensor->deleter) tensor->deleter(tensor);
  return XRT_OK;
}

/* Called once b's device memory is freed: a zero-copy import's tensor is
 * no longer needed. */
static void xrt__dlpack_freed(xrt__buffer *b) {
  struct DLManagedTensor *t = b->dl;
  b->dl = NULL;
  if (t && t->deleter) t->deleter(t);
}
