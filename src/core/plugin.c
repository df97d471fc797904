/*
 * src/core/plugin.c - plugins: ABI checks of a plugin table, the call check for
 * NULL entries, contexts, registration and loading (XRT_PLUGINS, directory
 * scans), topology, StableHLO versions, support queries.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"


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

/* The PJRT adapter (xrt_pjrt.c) is found the same way: XRT_WITH_PJRT (the
 * Makefile's) links it strongly; otherwise a weak reference finds it when
 * it is linked; without weak symbols, PJRT plugins are not loaded. */
#if defined(XRT_WITH_PJRT)
#define XRT__PJRT_LINKED() 1
#elif defined(__GNUC__) && !defined(XRT_NO_PJRT) && !defined(_WIN32)
#pragma weak xrt_pjrt_plugin_wrap
#pragma weak xrt_pjrt_plugin_unwrap
static bool xrt__pjrt_linked(void) {
  xrt_status (*volatile fn)(const void *, const char *, const char *,
                            const xrt_plugin_api **) = xrt_pjrt_plugin_wrap;
  return fn != NULL;
}
#define XRT__PJRT_LINKED() xrt__pjrt_linked()
#else
#define XRT__PJRT_LINKED() 0
#endif

/* Frees a wrapper xrt_pjrt_plugin_wrap made. */
static void xrt__pjrt_unwrap(const xrt_plugin_api *table) {
#if defined(XRT_WITH_PJRT) || \
    (defined(__GNUC__) && !defined(XRT_NO_PJRT) && !defined(_WIN32))
  if (XRT__PJRT_LINKED()) xrt_pjrt_plugin_unwrap(table);
#else
  (void)table;
#endif
}

/* The smallest table xrt loads: through `execute`, the last entry every
 * table since ABI 0.1 has (a shorter one cannot run a program). */
#define XRT__PLUGIN_MIN_SIZE                                                  \
  (offsetof(xrt_plugin_api, execute) + sizeof(((xrt_plugin_api *)0)->execute))
/* A table larger than this is garbage, not a newer minor version. */
#define XRT__PLUGIN_MAX_SIZE ((size_t)1 << 16)

/* The UNIMPLEMENTED answer for a table entry the plugin left NULL. */
XRT__PRIVATE xrt_status xrt__plugin_lacks(const xrt_plugin_api *api,
                                    const char *fn) {
  return xrt__fail(XRT_UNIMPLEMENTED, "plugin '%s' does not implement %s",
                   api->name, fn);
}

/* Used by client creation and release (defined in section 9a). */

/* "X.Y.Z" with decimal numbers (up to 9 digits each), nothing else. */
XRT__PRIVATE bool xrt__version_parse(const char *s, int v[3]) {
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

XRT__PRIVATE const xrt_plugin_api *xrt__plugin_reg_api(const xrt__plugin_reg *r) {
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
  d->api = r->table;
  if (r->api.platform_describe) {
    xrt_plugin_error err = {{0}};
    xrt_status s = r->api.platform_describe(d, &err);
    if (s) return xrt__fail_plugin(s, r->name, &err);
    d->struct_size = sizeof *d;
    d->api = r->table;
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
  /* A PJRT wrapper goes before its library: it may call into it. */
  if (r->pjrt_wrapper) xrt__pjrt_unwrap(r->table);
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

/* The name a PJRT library registers under when none is given: its file
 * name without directories, a "lib" prefix and the extension
 * ("/opt/libtpu.so" -> "tpu"). */
static void xrt__pjrt_default_name(const char *path, char *out, size_t cap) {
  const char *b = path;
  for (const char *p = path; *p; p++)
    if (*p == '/' || *p == '\\') b = p + 1;
  if (!strncmp(b, "lib", 3) && b[3] && b[3] != '.') b += 3;
  size_t n = strcspn(b, ".");
  if (!n) n = strlen(b);
  if (n >= cap) n = cap - 1;
  memcpy(out, b, n);
  out[n] = '\0';
}

/* A library that exports GetPjrtApi: its PJRT table wrapped as an xrt
 * table (*wrapped set), or why it cannot be. */
static xrt_status xrt__dl_pjrt_table(void *dl, const char *path,
                                     const char *name,
                                     const xrt_plugin_api **out,
                                     bool *wrapped) {
  char why[512], def[128];
  xrt__os_fn sym = xrt__os_dl_sym(dl, XRT_PJRT_ENTRY_SYMBOL, why, sizeof why);
  if (!sym)
    return xrt__fail(XRT_NOT_FOUND, "'%s' exports neither %s nor %s, so it "
                     "is not an xrt plugin nor a PJRT one (%s)", path,
                     XRT_PLUGIN_ENTRY_SYMBOL, XRT_PJRT_ENTRY_SYMBOL, why);
  if (!XRT__PJRT_LINKED())
    return xrt__fail(XRT_UNIMPLEMENTED, "'%s' is a PJRT plugin (it exports "
                     "%s), but this xrt was built without xrt_pjrt.c, which "
                     "loads them", path, XRT_PJRT_ENTRY_SYMBOL);
  const void *api = ((const void *(*)(void))sym)();
  if (!api)
    return xrt__fail(XRT_FAILED_PRECONDITION, "'%s': %s() returned NULL",
                     path, XRT_PJRT_ENTRY_SYMBOL);
  if (!name) {
    xrt__pjrt_default_name(path, def, sizeof def);
    name = def;
  }
#if defined(XRT_WITH_PJRT) || \
    (defined(__GNUC__) && !defined(XRT_NO_PJRT) && !defined(_WIN32))
  xrt_status s = xrt_pjrt_plugin_wrap(api, name, path, out);
  if (s) return s;
  *wrapped = true;
  return XRT_OK;
#else
  (void)out;
  (void)wrapped;
  return XRT_UNIMPLEMENTED;
#endif
}

/* The library's table: NOT_FOUND without the entry symbol, FAILED_
 * PRECONDITION when it returns NULL.  A PJRT library's table is wrapped
 * (*wrapped set: the caller then owns the wrapper). */
static xrt_status xrt__dl_table(void *dl, const char *path, const char *name,
                                const xrt_plugin_api **out, bool *wrapped) {
  char why[512];
  *wrapped = false;
  xrt__os_fn sym = xrt__os_dl_sym(dl, XRT_PLUGIN_ENTRY_SYMBOL, why, sizeof why);
  if (!sym) return xrt__dl_pjrt_table(dl, path, name, out, wrapped);
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
  bool wrapped = false;
  if (!dl) {
    s = xrt__fail(XRT_INVALID_ARGUMENT, "cannot load plugin '%s': not a "
                  "loadable shared library: %s", path, why);
  } else {
    s = xrt__dl_table(dl, path, name, &t, &wrapped);
  }
  if (skipped && (s == XRT_INVALID_ARGUMENT || s == XRT_NOT_FOUND)) {
    xrt__log(XRT_LOG_INFO, "plugin", "skipped %s", xrt_last_error());
    *skipped = true;
  } else if (!s) {
    s = xrt__reg_add(x, name, t, path, real, dl, out);
    if (!s) {
      dl = NULL; /* the registration's now */
      (*out)->id = id;
      (*out)->pjrt_wrapper = wrapped;
      wrapped = false;
    }
  }
  if (wrapped) xrt__pjrt_unwrap(t);
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

xrt_status xrt_context_register_pjrt(xrt_context *context, const char *name,
                                     const void *pjrt_api,
                                     xrt_plugin **out_plugin) {
  if (out_plugin) *out_plugin = NULL;
  xrt__context *x = xrt__context_get(context);
  XRT__CHECK_ARG(x, "invalid context");
  XRT__CHECK_ARG(pjrt_api, "pjrt_api is NULL");
  if (!XRT__PJRT_LINKED())
    return xrt__fail(XRT_UNIMPLEMENTED, "xrt_context_register_pjrt: this xrt "
                     "was built without xrt_pjrt.c, which wraps PJRT plugins");
  const xrt_plugin_api *t = NULL;
  if (!name) name = "pjrt";
  xrt_status s = XRT_UNIMPLEMENTED;
#if defined(XRT_WITH_PJRT) || \
    (defined(__GNUC__) && !defined(XRT_NO_PJRT) && !defined(_WIN32))
  s = xrt_pjrt_plugin_wrap(pjrt_api, name, NULL, &t);
#endif
  if (s) return s;
  pthread_mutex_lock(&x->mu);
  xrt__plugin_reg *r = NULL;
  s = xrt__reg_add(x, name, t, "", NULL, NULL, &r);
  if (!s) r->pjrt_wrapper = true;
  pthread_mutex_unlock(&x->mu);
  if (s) {
    xrt__pjrt_unwrap(t);
    return s;
  }
  if (out_plugin) *out_plugin = (xrt_plugin *)r->handle;
  return XRT_OK;
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
XRT__PRIVATE xrt_status xrt__context_acquire(xrt_context *context, const char *name,
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

XRT__PRIVATE void xrt__plugin_reg_unref(xrt__plugin_reg *r) {
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

XRT__PRIVATE xrt_status xrt__topology_resolve(const xrt_topology *in,
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

XRT__PRIVATE xrt_status xrt__plugin_check_version(const xrt__plugin_reg *r,
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
