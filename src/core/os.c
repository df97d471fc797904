/*
 * src/core/os.c - the operating-system layer (its interface: os.h): dynamic
 * loading, file identity, paths and directory listing, files read and
 * written whole, atomic file replacement, aligned memory, clocks and timed
 * waits, the CPU count and the process id (POSIX, and Windows under
 * _WIN32).  The core and the disk cache call it.  Part of the core of xrt;
 * MIT licensed, see LICENSE.
 */
#include "internal.h"

#if !defined(_WIN32)
#include <fcntl.h> /* open, AT_FDCWD */
#endif

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
  case ERROR_WRITE_PROTECT: return EROFS;
  case ERROR_FILE_EXISTS: case ERROR_ALREADY_EXISTS: return EEXIST;
  case ERROR_DIRECTORY: return ENOTDIR;
  case ERROR_DISK_FULL: case ERROR_HANDLE_DISK_FULL: return ENOSPC;
  case ERROR_NOT_ENOUGH_MEMORY: case ERROR_OUTOFMEMORY: return ENOMEM;
  default: return EIO;
  }
}

/* The last error as errno. */
static int xrt__os_last_errno(void) { return xrt__os_errno(GetLastError()); }

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

/* Whether error e means that another process holds the file: one that
 * replaces or removes it leaves it "delete pending" for a moment, and
 * until it is closed, opening it or renaming over it fails with
 * ERROR_ACCESS_DENIED (or ERROR_SHARING_VIOLATION) although the directory
 * is writable; so do virus scanners and indexers holding a new file open. */
static bool xrt__os_in_use(DWORD e) {
  return e == ERROR_ACCESS_DENIED || e == ERROR_SHARING_VIOLATION;
}

/* Whether a failed open or rename (error e, try number tries) is worth
 * another try, after a short sleep (at most about 140 ms in all). */
static bool xrt__os_retry(DWORD e, int tries) {
  if (!xrt__os_in_use(e) || tries >= 12) return false;
  Sleep(tries < 4 ? 1u << tries : 16u);
  return true;
}

/* FILETIME (100 ns since 1601) to nanoseconds since 1970. */
static int64_t xrt__os_filetime_ns(FILETIME ft) {
  int64_t t = (int64_t)((uint64_t)ft.dwHighDateTime << 32 | ft.dwLowDateTime);
  return (t - 116444736000000000LL) * 100;
}

XRT__PRIVATE int64_t xrt__os_now_ns(void) {
  static LARGE_INTEGER freq; /* constant since boot; races write the same */
  LARGE_INTEGER t;
  if (!freq.QuadPart) QueryPerformanceFrequency(&freq);
  QueryPerformanceCounter(&t);
  int64_t f = freq.QuadPart, c = t.QuadPart;
  return c / f * 1000000000 + c % f * 1000000000 / f;
}

XRT__OS_API int64_t xrt__os_wall_ns(void) {
  FILETIME ft;
  GetSystemTimePreciseAsFileTime(&ft);
  return xrt__os_filetime_ns(ft);
}

XRT__PRIVATE void xrt__os_sleep_ns(long ns) {
  Sleep((DWORD)((ns + 999999) / 1000000)); /* at least ns: 0 yields */
}

XRT__PRIVATE int xrt__os_cpu_count(void) {
  DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
  return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

XRT__OS_API long xrt__os_pid(void) { return (long)GetCurrentProcessId(); }

/* winpthreads' timed waits take the wall clock; xrt waits on a monotonic
 * deadline, so it waits relative to it and re-checks the deadline (an early
 * return from ms rounding is a spurious wakeup, not a timeout). */
XRT__PRIVATE void xrt__os_cond_init(pthread_cond_t *cv) { pthread_cond_init(cv, NULL); }

XRT__PRIVATE int xrt__os_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                                   int64_t deadline_ns) {
  int64_t left = deadline_ns - xrt__os_now_ns();
  if (left <= 0) return ETIMEDOUT;
  struct timespec rel = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
  int rc = pthread_cond_timedwait_relative_np(cv, mu, &rel);
  return rc == ETIMEDOUT && xrt__os_now_ns() < deadline_ns ? 0 : rc;
}

XRT__PRIVATE void *xrt__os_aligned_alloc(size_t align, size_t size) {
  return _aligned_malloc(size ? size : 1, align);
}
XRT__PRIVATE void xrt__os_aligned_free(void *p) { _aligned_free(p); }

XRT__PRIVATE void *xrt__os_dl_open(const char *path, char *why, size_t cap) {
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

XRT__PRIVATE xrt__os_fn xrt__os_dl_sym(void *lib, const char *name, char *why,
                                 size_t cap) {
  FARPROC p = GetProcAddress((HMODULE)lib, name);
  if (!p) xrt__os_fail(why, cap);
  xrt__os_fn fn;
  memcpy(&fn, &p, sizeof fn);
  return fn;
}

XRT__PRIVATE void xrt__os_dl_close(void *lib) { FreeLibrary((HMODULE)lib); }

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

XRT__PRIVATE int xrt__os_file_identify(const char *path, xrt__os_file_id *id,
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

XRT__OS_API int xrt__os_file_stat(const char *path, xrt__os_file_info *info) {
  int err = 0;
  wchar_t *w = xrt__os_wide(path, &err);
  WIN32_FILE_ATTRIBUTE_DATA fa;
  if (w && !GetFileAttributesExW(w, GetFileExInfoStandard, &fa))
    err = xrt__os_last_errno();
  free(w);
  if (err) return err;
  DWORD attr = fa.dwFileAttributes;
  info->is_dir = (attr & FILE_ATTRIBUTE_DIRECTORY) != 0;
  info->is_file = !(attr & (FILE_ATTRIBUTE_DIRECTORY |
                            FILE_ATTRIBUTE_REPARSE_POINT));
  info->size = (uint64_t)fa.nFileSizeHigh << 32 | fa.nFileSizeLow;
  info->mtime_ns = xrt__os_filetime_ns(fa.ftLastWriteTime);
  return 0;
}

/* Whether path names a file without a directory ("x.dll"), which the
 * loader would look for in its own search path rather than here. */
XRT__PRIVATE bool xrt__os_path_is_bare(const char *path) {
  return !strpbrk(path, "/\\:");
}

XRT__OS_API int xrt__os_list_dir(const char *dir, xrt__os_dir_fn fn, void *ctx,
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

/* Creates directory path (one level). */
static int xrt__os_make_dir(const char *path) {
  int err = 0;
  wchar_t *w = xrt__os_wide(path, &err);
  if (w && !CreateDirectoryW(w, NULL)) err = xrt__os_last_errno();
  free(w);
  return err;
}

XRT__PRIVATE FILE *xrt__os_fopen(const char *path, const char *mode) {
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

/* Readers share delete access, so that a writer can rename a new file over
 * one being read (MoveFileExW); an open that finds the file in use is
 * tried again. */
XRT__OS_API int xrt__os_read_file(const char *path, const xrt_allocator *al,
                                  uint64_t max_size, void **out,
                                  size_t *out_size) {
  int err = 0;
  wchar_t *w = xrt__os_wide(path, &err);
  if (!w) return err;
  HANDLE h;
  for (int tries = 0;; tries++) {
    h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE |
                    FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                    FILE_ATTRIBUTE_NORMAL, NULL);
    if (h != INVALID_HANDLE_VALUE || !xrt__os_retry(GetLastError(), tries))
      break;
  }
  if (h == INVALID_HANDLE_VALUE) err = xrt__os_last_errno();
  free(w);
  if (err) return err;
  LARGE_INTEGER sz;
  char *buf = NULL;
  size_t size = 0, want = 0;
  if (!GetFileSizeEx(h, &sz)) err = xrt__os_last_errno();
  else if (sz.QuadPart < 0 || (uint64_t)sz.QuadPart > max_size ||
           (uint64_t)sz.QuadPart >= SIZE_MAX)
    err = EFBIG;
  else if (!(buf = (char *)al->alloc(al->self, (size_t)sz.QuadPart + 1)))
    err = ENOMEM;
  else
    want = (size_t)sz.QuadPart;
  while (!err && size < want) {
    DWORD n = 0, chunk = want - size > (1u << 30) ? (1u << 30)
                                                  : (DWORD)(want - size);
    if (!ReadFile(h, buf + size, chunk, &n, NULL)) err = xrt__os_last_errno();
    if (!n) break; /* shorter than it was: the caller sees truncation */
    size += n;
  }
  CloseHandle(h);
  if (err) {
    al->free(al->self, buf);
    return err;
  }
  *out = buf;
  *out_size = size;
  return 0;
}

/* Creates a new, empty file whose name is tmpl with its last six
 * characters (XXXXXX) made unique. */
XRT__PRIVATE int xrt__os_temp_file(char *tmpl, char *why, size_t cap) {
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

/* Replaces to with from in one step: readers see the old or the new file.
 * A target still in use after the retries fails with EBUSY: it is not a
 * directory the caller may not write (from was just written there). */
XRT__PRIVATE int xrt__os_replace_file(const char *from, const char *to, char *why,
                                size_t cap) {
  int err = 0;
  wchar_t *wf = xrt__os_wide(from, &err), *wt = wf ? xrt__os_wide(to, &err)
                                                   : NULL;
  if (!wt) snprintf(why, cap, "%s", strerror(err));
  for (int tries = 0; wt && !MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING |
                                                     MOVEFILE_WRITE_THROUGH);
       tries++) {
    DWORD e = GetLastError();
    if (xrt__os_retry(e, tries)) continue;
    xrt__os_reason(e, why, cap);
    err = xrt__os_in_use(e) ? EBUSY : xrt__os_errno(e);
    break;
  }
  free(wf);
  free(wt);
  return err;
}

/* Writes data to the new file path (it must not exist) and flushes it to
 * the disk. */
static int xrt__os_write_new_file(const char *path, const void *data,
                                  size_t size) {
  int err = 0;
  wchar_t *w = xrt__os_wide(path, &err);
  if (!w) return err;
  HANDLE h = CreateFileW(w, GENERIC_WRITE, 0, NULL, CREATE_NEW,
                         FILE_ATTRIBUTE_NORMAL, NULL);
  free(w);
  if (h == INVALID_HANDLE_VALUE) return xrt__os_last_errno();
  const char *p = (const char *)data;
  while (size && !err) {
    DWORD n = 0, want = size > (1u << 30) ? (1u << 30) : (DWORD)size;
    if (!WriteFile(h, p, want, &n, NULL)) err = xrt__os_last_errno();
    else if (!n) err = ENOSPC;
    else p += n, size -= n;
  }
  if (!err && !FlushFileBuffers(h)) err = xrt__os_last_errno();
  CloseHandle(h);
  return err;
}

/* Nothing to do: MOVEFILE_WRITE_THROUGH returns once the rename is on the
 * disk. */
static void xrt__os_sync_dir(const char *dir) { XRT__UNUSED(dir); }

XRT__OS_API void xrt__os_touch(const char *path) {
  wchar_t *w = xrt__os_wide(path, NULL);
  HANDLE h = w ? CreateFileW(w, FILE_WRITE_ATTRIBUTES, FILE_SHARE_READ |
                             FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                             OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL)
               : INVALID_HANDLE_VALUE;
  free(w);
  if (h == INVALID_HANDLE_VALUE) return;
  FILETIME now;
  GetSystemTimePreciseAsFileTime(&now);
  SetFileTime(h, NULL, NULL, &now);
  CloseHandle(h);
}

XRT__OS_API int xrt__os_unlink(const char *path) {
  int err = 0;
  wchar_t *w = xrt__os_wide(path, &err);
  if (w && !DeleteFileW(w)) err = xrt__os_last_errno();
  free(w);
  return err;
}

#else /* POSIX */

XRT__PRIVATE int64_t xrt__os_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

XRT__OS_API int64_t xrt__os_wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

XRT__PRIVATE void xrt__os_sleep_ns(long ns) {
  struct timespec ts = {(time_t)(ns / 1000000000), ns % 1000000000};
  nanosleep(&ts, NULL);
}

XRT__PRIVATE int xrt__os_cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

XRT__OS_API long xrt__os_pid(void) { return (long)getpid(); }

/* Timed waits on the monotonic clock, immune to wall-clock changes. */
XRT__PRIVATE void xrt__os_cond_init(pthread_cond_t *cv) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(cv, &ca);
  pthread_condattr_destroy(&ca);
}

XRT__PRIVATE int xrt__os_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                                   int64_t deadline_ns) {
  struct timespec ts = {(time_t)(deadline_ns / 1000000000),
                        (long)(deadline_ns % 1000000000)};
  return pthread_cond_timedwait(cv, mu, &ts);
}

/* size is rounded up to a multiple of align, as C11 asks. */
XRT__PRIVATE void *xrt__os_aligned_alloc(size_t align, size_t size) {
  size_t n = (size + align - 1) / align * align;
  return aligned_alloc(align, n ? n : align);
}
XRT__PRIVATE void xrt__os_aligned_free(void *p) { free(p); }

XRT__PRIVATE void *xrt__os_dl_open(const char *path, char *why, size_t cap) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, cap, "%s", e ? e : "unknown reason");
  }
  return lib;
}

XRT__PRIVATE xrt__os_fn xrt__os_dl_sym(void *lib, const char *name, char *why,
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

XRT__PRIVATE void xrt__os_dl_close(void *lib) { dlclose(lib); }

XRT__PRIVATE int xrt__os_file_identify(const char *path, xrt__os_file_id *id,
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

XRT__OS_API int xrt__os_file_stat(const char *path, xrt__os_file_info *info) {
  struct stat st;
  if (stat(path, &st) != 0) return errno;
  info->is_file = S_ISREG(st.st_mode);
  info->is_dir = S_ISDIR(st.st_mode);
  info->size = (uint64_t)st.st_size;
  info->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
                   st.st_mtim.tv_nsec;
  return 0;
}

/* Whether path names a file without a directory ("x.so"), which the
 * loader would look for in its own search path rather than here. */
XRT__PRIVATE bool xrt__os_path_is_bare(const char *path) {
  return !strchr(path, '/');
}

XRT__OS_API int xrt__os_list_dir(const char *dir, xrt__os_dir_fn fn, void *ctx,
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

/* Creates directory path (one level). */
static int xrt__os_make_dir(const char *path) {
  return mkdir(path, 0777) == 0 ? 0 : errno;
}

XRT__PRIVATE FILE *xrt__os_fopen(const char *path, const char *mode) {
  return fopen(path, mode);
}

XRT__OS_API int xrt__os_read_file(const char *path, const xrt_allocator *al,
                                  uint64_t max_size, void **out,
                                  size_t *out_size) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return errno;
  struct stat st;
  int err = 0;
  char *buf = NULL;
  size_t size = 0;
  if (fstat(fd, &st) != 0) err = errno;
  else if (st.st_size < 0 || (uint64_t)st.st_size > max_size ||
           (uint64_t)st.st_size >= SIZE_MAX)
    err = EFBIG;
  else if (!(buf = (char *)al->alloc(al->self, (size_t)st.st_size + 1)))
    err = ENOMEM;
  while (!err && size < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + size, (size_t)st.st_size - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n <= 0) break; /* shorter than it was: the caller sees truncation */
    size += (size_t)n;
  }
  close(fd);
  if (err) {
    al->free(al->self, buf);
    return err;
  }
  *out = buf;
  *out_size = size;
  return 0;
}

/* Creates a new, empty file whose name is tmpl with its last six
 * characters (XXXXXX) made unique. */
XRT__PRIVATE int xrt__os_temp_file(char *tmpl, char *why, size_t cap) {
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
XRT__PRIVATE int xrt__os_replace_file(const char *from, const char *to, char *why,
                                size_t cap) {
  if (rename(from, to) == 0) return 0;
  int err = errno;
  snprintf(why, cap, "%s", strerror(err));
  return err;
}

/* Writes data to the new file path (it must not exist) and flushes it to
 * the disk. */
static int xrt__os_write_new_file(const char *path, const void *data,
                                  size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return errno;
  const char *p = (const char *)data;
  int err = 0;
  while (size && !err) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) err = n < 0 ? errno : ENOSPC;
    else p += n, size -= (size_t)n;
  }
  if (!err && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  return err;
}

/* Flushes directory dir's entries: after a rename, the new name is on the
 * disk only once its directory is; without this a crash soon after could
 * lose an entry whose write had completed (the file's own fsync does not
 * cover its name).  Best effort: some file systems refuse. */
static void xrt__os_sync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY);
  if (fd < 0) return;
  while (fsync(fd) != 0 && errno == EINTR) {
  }
  close(fd);
}

XRT__OS_API void xrt__os_touch(const char *path) {
  utimensat(AT_FDCWD, path, NULL, 0);
}

XRT__OS_API int xrt__os_unlink(const char *path) {
  return unlink(path) == 0 ? 0 : errno;
}

#endif

/* ---- Built on the above, the same on both ---- */

XRT__OS_API int xrt__os_mkdir(const char *path) {
  int err = xrt__os_make_dir(path);
  xrt__os_file_info info;
  if (err == EEXIST)
    err = xrt__os_file_stat(path, &info) == 0 && info.is_dir ? 0 : ENOTDIR;
  return err;
}

XRT__OS_API int xrt__os_write_file_atomic(const char *dir, const char *tmp,
                                          const char *path, const void *data,
                                          size_t size) {
  char why[256]; /* not reported: the caller maps the errno value */
  int err = xrt__os_write_new_file(tmp, data, size);
  if (!err) err = xrt__os_replace_file(tmp, path, why, sizeof why);
  if (err) xrt__os_unlink(tmp);
  else xrt__os_sync_dir(dir);
  return err;
}
