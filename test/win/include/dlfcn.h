/*
 * test/win/include/dlfcn.h - the Windows build of the tests only: dlopen,
 * dlsym, dlclose and dlerror over LoadLibrary, GetProcAddress, FreeLibrary
 * and FormatMessage, so that tests which open plugin libraries directly
 * build unchanged.
 */
#ifndef XRT_WIN_DLFCN_H
#define XRT_WIN_DLFCN_H
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <stdio.h>
#include <string.h>
#include <windows.h>

#define RTLD_LAZY 1
#define RTLD_NOW 2
#define RTLD_LOCAL 0
#define RTLD_GLOBAL 0

static char xrt_win_dlerror_buf[512];
static int xrt_win_dlerror_set;

static inline void xrt_win_dlerror_save(void) {
  DWORD e = GetLastError();
  DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM |
                               FORMAT_MESSAGE_IGNORE_INSERTS,
                           NULL, e, 0, xrt_win_dlerror_buf,
                           (DWORD)sizeof xrt_win_dlerror_buf, NULL);
  while (n && (xrt_win_dlerror_buf[n - 1] == '\n' ||
               xrt_win_dlerror_buf[n - 1] == '\r'))
    xrt_win_dlerror_buf[--n] = 0;
  if (!n)
    snprintf(xrt_win_dlerror_buf, sizeof xrt_win_dlerror_buf,
             "Windows error %lu", (unsigned long)e);
  xrt_win_dlerror_set = 1;
}

static inline void *dlopen(const char *path, int flags) {
  (void)flags;
  HMODULE h = LoadLibraryA(path);
  if (!h) xrt_win_dlerror_save();
  return (void *)h;
}

static inline void *dlsym(void *handle, const char *name) {
  FARPROC p = GetProcAddress((HMODULE)handle, name);
  if (!p) xrt_win_dlerror_save();
  void *q;
  memcpy(&q, &p, sizeof q);
  return q;
}

static inline int dlclose(void *handle) {
  return FreeLibrary((HMODULE)handle) ? 0 : -1;
}

/* dladdr: the module holding addr (its file name and base address). */
typedef struct {
  const char *dli_fname;
  void *dli_fbase;
  const char *dli_sname;
  void *dli_saddr;
} Dl_info;

static inline int dladdr(const void *addr, Dl_info *info) {
  static char name[MAX_PATH];
  HMODULE m = NULL;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                              GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          (LPCSTR)addr, &m) ||
      !GetModuleFileNameA(m, name, sizeof name))
    return 0;
  info->dli_fname = name;
  info->dli_fbase = (void *)m;
  info->dli_sname = NULL;
  info->dli_saddr = NULL;
  return 1;
}

static inline char *dlerror(void) {
  if (!xrt_win_dlerror_set) return NULL;
  xrt_win_dlerror_set = 0;
  return xrt_win_dlerror_buf;
}
#endif
