/*
 * src/core/trace.c - Chrome traces (XRT_TRACE): the event buffer, the client
 * registry that names tracks, the plugin's host services table, and
 * compile events.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

XRT__PRIVATE_DATA _Atomic int xrt__trace_active;

/* Everything below is guarded by xrt__trace_mu. */
XRT__PRIVATE_DATA pthread_mutex_t xrt__trace_mu = PTHREAD_MUTEX_INITIALIZER;
XRT__PRIVATE_DATA xrt__trace_state xrt__tr;

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

XRT__PRIVATE void xrt__trace_put(const char *s, size_t n) {
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

XRT__PRIVATE void xrt__trace_puts(const char *s) { xrt__trace_put(s, strlen(s)); }

#if defined(__GNUC__)
XRT_PRINTF_FORMAT(1, 2)
#endif
XRT__PRIVATE void xrt__trace_printf(const char *fmt, ...) {
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
XRT__PRIVATE void xrt__trace_put_escaped(const char *str) {
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
XRT__PRIVATE void xrt__trace_name_client(xrt__trace_client *tc) {
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

XRT__PRIVATE xrt__trace_client *xrt__trace_find(const struct xrt__client *c) {
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
XRT__PRIVATE char *xrt__trace_itoa(char *q, uint64_t v) {
  char tmp[24];
  int n = 0;
  do tmp[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (n) *q++ = tmp[--n];
  return q;
}

/* ns as microseconds with three decimals ("12.345"). */
XRT__PRIVATE char *xrt__trace_us(char *q, int64_t ns) {
  uint64_t v = ns < 0 ? 0 : (uint64_t)ns;
  q = xrt__trace_itoa(q, v / 1000);
  unsigned f = (unsigned)(v % 1000);
  q[0] = '.';
  q[1] = (char)('0' + f / 100);
  q[2] = (char)('0' + f / 10 % 10);
  q[3] = (char)('0' + f % 10);
  return q + 4;
}

XRT__PRIVATE char *xrt__trace_cat(char *q, const char *s) {
  size_t n = strlen(s);
  memcpy(q, s, n);
  return q + n;
}

/* An event ending now named "prefix.name" ("name" when prefix is empty). */
XRT__PRIVATE void xrt__trace_named(const struct xrt__client *c, int device,
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
XRT__PRIVATE void xrt__trace_transfer(const struct xrt__client *c, int device,
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
XRT__PRIVATE xrt__trace_client *xrt__trace_client_of(struct xrt__client *c,
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
XRT__PRIVATE void xrt__trace_client_opened(struct xrt__client *c,
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
XRT__PRIVATE void xrt__trace_client_closed(const struct xrt__client *c) {
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
XRT__PRIVATE int64_t xrt__compile_begin(void) {
  if (!xrt__trace_on() && !xrt_log_enabled(XRT_LOG_DEBUG, "compile"))
    return 0;
  int64_t t = xrt__now_ns();
  return t ? t : 1;
}

/* A compile of module's entry that began at t0_ns succeeded. */
XRT__PRIVATE void xrt__compiled(const struct xrt__client *c, const char *module,
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
XRT__PRIVATE void xrt__trace_cache_hit(const struct xrt__client *c,
                                 const char *cache, const char *what,
                                 int64_t t0_ns) {
  int64_t t1 = xrt__now_ns();
  char name[320];
  snprintf(name, sizeof name, "%s hit @%.256s", cache, what ? what : "?");
  xrt__trace_complete(c, -1, "cache", name, t0_ns, t1);
}
