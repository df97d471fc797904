/*
 * test/win/posix_compat.h - the Windows build of the tests only (forced in
 * with -include): the few POSIX calls the tests make, on the C runtime of
 * mingw-w64, so that the test sources build unchanged.  Paths like
 * "/tmp/x" work under wine, which maps "/" to drive Z:.
 */
#ifndef XRT_WIN_POSIX_COMPAT_H
#define XRT_WIN_POSIX_COMPAT_H
#if defined(_WIN32)

#include <direct.h>  /* _mkdir, _rmdir */
#include <io.h>      /* _findfirst */
#include <stdint.h>
#include <errno.h>
#include <process.h> /* _getpid */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int xrt_win_setenv(const char *name, const char *value,
                                 int overwrite) {
  if (!overwrite && getenv(name)) return 0;
  return _putenv_s(name, value) == 0 ? 0 : -1;
}
#define setenv xrt_win_setenv

/* An empty value removes the variable on Windows. */
static inline int xrt_win_unsetenv(const char *name) {
  return _putenv_s(name, "") == 0 ? 0 : -1;
}
#define unsetenv xrt_win_unsetenv

/* Creates a new directory named tmpl with its XXXXXX made unique. */
static inline char *xrt_win_mkdtemp(char *tmpl) {
  static unsigned seq;
  size_t n = strlen(tmpl);
  if (n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
    errno = EINVAL;
    return NULL;
  }
  for (int tries = 0; tries < 100; tries++) {
    unsigned v = (unsigned)_getpid() * 2654435761u ^ (seq++ * 40503u) ^
                 (unsigned)rand();
    for (size_t k = n - 6; k < n; k++, v >>= 5)
      tmpl[k] = "0123456789abcdefghijklmnopqrstuv"[v & 31];
    if (_mkdir(tmpl) == 0) return tmpl;
    if (errno != EEXIST) return NULL;
  }
  return NULL;
}
#define mkdtemp xrt_win_mkdtemp

/* system(): the tests run one command, "rm -rf 'DIR'" to remove their
 * temporary directory, which cmd.exe does not know; done here. */
static inline int xrt_win_rm_rf(const char *path) {
  char pattern[1024], sub[1024];
  snprintf(pattern, sizeof pattern, "%s/*", path);
  struct _finddata_t fd;
  intptr_t h = _findfirst(pattern, &fd);
  if (h != -1) {
    do {
      if (strcmp(fd.name, ".") == 0 || strcmp(fd.name, "..") == 0) continue;
      snprintf(sub, sizeof sub, "%s/%s", path, fd.name);
      if (fd.attrib & _A_SUBDIR) xrt_win_rm_rf(sub);
      else remove(sub);
    } while (_findnext(h, &fd) == 0);
    _findclose(h);
  }
  return _rmdir(path);
}

static inline int xrt_win_system(const char *cmd) {
  char dir[1024];
  if (cmd && sscanf(cmd, "rm -rf '%1023[^']'", dir) == 1)
    return xrt_win_rm_rf(dir) == 0 ? 0 : 1;
  return system(cmd);
}
#define system xrt_win_system

#endif /* _WIN32 */
#endif
