/*
 * src/core/log.c - logging: levels per component, XRT_LOG, the callback.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

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
XRT__PRIVATE void xrt__log_emitv(xrt_log_level level, const char *component,
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

/* xrt__fail's hook: failures returned to the user, at debug level. */
XRT__PRIVATE void xrt__log_failure(xrt_status code, const char *message) {
  if (xrt_log_enabled(XRT_LOG_DEBUG, "core"))
    xrt__log(XRT_LOG_DEBUG, "core", "returning %s: %s", xrt_strerror(code),
             message);
}
