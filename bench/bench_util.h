/*
 * bench_util.h - helpers shared by the benchmarks in bench/: a monotonic
 * clock, failure reports, clients and compiled programs, and numbers read
 * from a baseline command (python3 + numpy/torch) run through the shell.
 *
 * Include it after xrt.h with _POSIX_C_SOURCE >= 200809L (clock_gettime,
 * popen) and, optionally, BENCH_NAME defined to prefix the messages.
 */
#ifndef XRT_BENCH_UTIL_H
#define XRT_BENCH_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../xrt.h"

#ifndef BENCH_NAME
#define BENCH_NAME "bench"
#endif

/* Text grown by bench_put (generated programs); failed is set, and further
 * puts ignored, when memory runs out. */
typedef struct bench_text {
  char *p;
  size_t len, cap;
  int failed;
} bench_text;

/* Appends printf-formatted text to t (t->p must hold at least one byte). */
static inline void bench_put(bench_text *t, const char *fmt, ...) {
  if (t->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->failed = 1;
      return;
    }
    if ((size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap * 2 + (size_t)n;
    char *p = (char *)realloc(t->p, cap);
    if (!p) {
      t->failed = 1;
      return;
    }
    t->p = p;
    t->cap = cap;
  }
}


/* Seconds on the monotonic clock. */
static inline double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reports a failed call on stderr; returns 1 (a main's exit status). */
static inline int bench_fail(const char *what, xrt_status s) {
  fprintf(stderr, BENCH_NAME ": %s: %s [%s]\n", what, xrt_last_error(),
          xrt_strerror(s));
  return 1;
}

/* A client of devices devices with threads threads per device (0 keeps
 * either default), or NULL after reporting why. */
static inline xrt_client *bench_client(int devices, int threads) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  if (devices) o.num_devices = devices;
  if (threads) o.threads_per_device = threads;
  xrt_client *c = NULL;
  xrt_status s = xrt_client_create(&o, &c);
  if (s) bench_fail("client", s);
  return c;
}

/* src compiled for replicas (0: the program's own count), or NULL after
 * reporting why. */
static inline xrt_executable *bench_compile_src(xrt_client *c,
                                                const char *src,
                                                int replicas) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = replicas;
  xrt_executable *exe = NULL;
  xrt_status s = xrt_compile(c, src, strlen(src), &o, &exe);
  if (s) bench_fail("compile", s);
  return exe;
}

/* Runs cmd through the shell and returns the number its first line of
 * output starts with, if cmd exits 0 and the number is > 0; -1 otherwise,
 * with the reason (that line, or "no output") in why when why is not NULL. */
static inline double bench_popen_number(const char *cmd, char *why,
                                        size_t why_cap) {
  char line[256] = "";
  fflush(stdout); /* the command's output must not overtake ours */
  FILE *p = popen(cmd, "r");
  if (!p) {
    if (why) snprintf(why, why_cap, "cannot run it");
    return -1;
  }
  char *got = fgets(line, sizeof line, p);
  int rc = pclose(p);
  double t = got ? strtod(line, NULL) : 0;
  if (rc != 0 || !(t > 0)) {
    line[strcspn(line, "\n")] = 0;
    if (why) snprintf(why, why_cap, "%s", line[0] ? line : "no output");
    return -1;
  }
  return t;
}

#endif /* XRT_BENCH_UTIL_H */
