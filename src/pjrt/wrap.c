/*
 * src/pjrt/wrap.c - xrt_pjrt_plugin_wrap and unwrap: a PJRT plugin's
 * PJRT_Api table checked (version, size, the functions xrt cannot do
 * without), initialized, described, and wrapped as an xrt plugin table.
 */
#include "xrt.h"
#include "internal.h"

/* The functions every call path needs: a table without one of them is
 * refused at once, rather than failing at its first use. */
#define XPJ_REQUIRED(X)                                                      \
  X(PJRT_Error_Destroy) X(PJRT_Error_Message) X(PJRT_Error_GetCode)          \
  X(PJRT_Event_Destroy) X(PJRT_Event_Await) X(PJRT_Client_Create)            \
  X(PJRT_Client_Destroy) X(PJRT_Client_AddressableDevices)                   \
  X(PJRT_Client_Compile) X(PJRT_Client_BufferFromHostBuffer)                 \
  X(PJRT_LoadedExecutable_Destroy) X(PJRT_LoadedExecutable_Execute)          \
  X(PJRT_Buffer_Destroy) X(PJRT_Buffer_ToHostBuffer)

typedef struct xpj_required {
  const char *name;
  size_t end; /* bytes of PJRT_Api up to and including the field */
} xpj_required;

#define XPJ_REQ_ENTRY(f) {#f, PJRT_STRUCT_SIZE(PJRT_Api, f)},
static const xpj_required xpj_required_fns[] = {XPJ_REQUIRED(XPJ_REQ_ENTRY)};
#undef XPJ_REQ_ENTRY
#define XPJ_NUM_REQUIRED \
  (sizeof xpj_required_fns / sizeof xpj_required_fns[0])

/* Reads a required entry of the copied table by its offset. */
static int xpj_entry_null(const PJRT_Api *t, size_t end) {
  void (*fn)(void);
  memcpy(&fn, (const char *)t + end - sizeof fn, sizeof fn);
  return fn == NULL;
}

/* "plugin 'name' (label)" for the refusals, as the core words its own. */
static void xpj_who(char *dst, size_t cap, const char *name,
                    const char *label) {
  snprintf(dst, cap, "plugin '%s'%s%s%s", name, label ? " (" : "",
           label ? label : "", label ? ")" : "");
}

/* Version and size: what can be read and called at all. */
static xrt_status xpj_check_table(const PJRT_Api *api, const char *who) {
  size_t need = PJRT_STRUCT_SIZE(PJRT_Api, pjrt_api_version);
  if (api->struct_size < need)
    return xrt_report_error(XRT_FAILED_PRECONDITION, "%s: its PJRT_Api "
                            "table's struct_size is %zu bytes, too small to "
                            "hold its version (%zu bytes): not a PJRT "
                            "plugin table", who, api->struct_size, need);
  const PJRT_Api_Version *v = &api->pjrt_api_version;
  if (v->major_version != PJRT_API_MAJOR)
    return xrt_report_error(XRT_FAILED_PRECONDITION, "%s was built for PJRT "
                            "C API %d.%d; xrt implements PJRT C API %d.%d "
                            "and loads only major version %d (with any "
                            "minor)", who, v->major_version,
                            v->minor_version, PJRT_API_MAJOR,
                            PJRT_API_MINOR, PJRT_API_MAJOR);
  for (size_t i = 0; i < XPJ_NUM_REQUIRED; i++)
    if (api->struct_size < xpj_required_fns[i].end)
      return xrt_report_error(XRT_FAILED_PRECONDITION, "%s (PJRT C API "
                              "%d.%d): its PJRT_Api table's struct_size is "
                              "%zu bytes, too small to hold %s, which xrt "
                              "calls (%zu bytes needed)", who,
                              v->major_version, v->minor_version,
                              api->struct_size, xpj_required_fns[i].name,
                              xpj_required_fns[i].end);
  return XRT_OK;
}

/* The required entries the table leaves NULL, named. */
static xrt_status xpj_check_required(const PJRT_Api *t, const char *who) {
  char missing[1024] = "";
  size_t n = 0;
  for (size_t i = 0; i < XPJ_NUM_REQUIRED; i++)
    if (xpj_entry_null(t, xpj_required_fns[i].end))
      n += (size_t)snprintf(missing + n, n < sizeof missing ?
                            sizeof missing - n : 0, "%s%s", n ? ", " : "",
                            xpj_required_fns[i].name);
  if (!n) return XRT_OK;
  return xrt_report_error(XRT_FAILED_PRECONDITION, "%s: its PJRT_Api table "
                          "lacks %s (NULL), which xrt needs", who, missing);
}

/* ---- initialize and attributes ---- */

/* A failure while wrapping as this thread's last error: err's message
 * names the plugin; the report adds where it was loaded from. */
static xrt_status xpj_report(const xpj_plugin *p, xrt_status s,
                             const xrt_plugin_error *err) {
  char head[600];
  int n = snprintf(head, sizeof head, "plugin '%s': ", p->name);
  const char *m = err->message;
  if (n > 0 && (size_t)n < sizeof head && !strncmp(m, head, (size_t)n))
    m += n;
  return xrt_report_error(s, "plugin '%s'%s: %s", p->name, p->label, m);
}

static xrt_status xpj_initialize(xpj_plugin *p) {
  if (!p->fn.PJRT_Plugin_Initialize) return XRT_OK;
  xrt_plugin_error err;
  PJRT_Plugin_Initialize_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE;
  PJRT_Error *e = p->fn.PJRT_Plugin_Initialize(&a);
  if (!e || xpj_unimplemented(p, e)) return XRT_OK;
  return xpj_report(p, xpj_error(p, e, "PJRT_Plugin_Initialize", &err), &err);
}

/* "X.Y.Z" from an int64 list attribute of three non-negative numbers. */
static int xpj_version_of(const PJRT_NamedValue *v, char *dst, size_t cap) {
  if (v->type != PJRT_NamedValue_kInt64List || v->value_size != 3 ||
      !v->int64_array_value)
    return 0;
  const int64_t *x = v->int64_array_value;
  if (x[0] < 0 || x[1] < 0 || x[2] < 0 || x[0] > 999999 || x[1] > 999999 ||
      x[2] > 999999)
    return 0;
  snprintf(dst, cap, "%lld.%lld.%lld", (long long)x[0], (long long)x[1],
           (long long)x[2]);
  return 1;
}

static int xpj_named(const PJRT_NamedValue *v, const char *name) {
  size_t n = strlen(name);
  return v->name && v->name_size == n && !memcmp(v->name, name, n);
}

static xrt_status xpj_attributes(xpj_plugin *p) {
  if (!p->fn.PJRT_Plugin_Attributes) return XRT_OK;
  PJRT_Plugin_Attributes_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_STRUCT_SIZE(PJRT_Plugin_Attributes_Args, num_attributes);
  PJRT_Error *e = p->fn.PJRT_Plugin_Attributes(&a);
  xrt_plugin_error err;
  xrt_status s = XRT_OK;
  if (e && xpj_unimplemented(p, e)) return XRT_OK;
  if (e) s = xpj_error(p, e, "PJRT_Plugin_Attributes", &err);
  else s = xpj_attrs_copy(p, "PJRT_Plugin_Attributes", a.attributes,
                          a.num_attributes, &p->attrs, &err);
  if (s) return xpj_report(p, s, &err);
  for (size_t i = 0; i < a.num_attributes; i++) {
    if (xpj_named(&a.attributes[i], "stablehlo_minimum_version"))
      p->has_shlo_min = xpj_version_of(&a.attributes[i], p->shlo_min,
                                       sizeof p->shlo_min);
    if (xpj_named(&a.attributes[i], "stablehlo_current_version"))
      p->has_shlo_max = xpj_version_of(&a.attributes[i], p->shlo_max,
                                       sizeof p->shlo_max);
  }
  return XRT_OK;
}

/* ---- the platform description ---- */

static uint64_t xpj_dtypes(void) {
  uint64_t m = 0;
  for (int t = 1; t < XRT_DTYPE_COUNT; t++)
    if (xpj_type_of((xrt_dtype)t) != PJRT_Buffer_Type_INVALID)
      m |= (uint64_t)1 << t;
  return m;
}

static xrt_status xpj_platform_describe(xrt_plugin_platform_desc *out,
                                        xrt_plugin_error *err) {
  if (!out || !XRT_STRUCT_HAS(out, xrt_plugin_platform_desc, api) ||
      !out->api)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "platform_describe: no "
                    "table to describe (a core older than ABI 1.3)");
  const xpj_plugin *p = (const xpj_plugin *)out->api;
  out->stablehlo_min = p->has_shlo_min ? p->shlo_min : NULL;
  out->stablehlo_max = p->has_shlo_max ? p->shlo_max : NULL;
  /* A PJRT launch is one call over all its devices: together. */
  out->capabilities = XRT_CAP_ASYNC | XRT_CAP_MULTI_DEVICE |
                      XRT_CAP_COLLECTIVES | XRT_CAP_LAUNCH_TOGETHER;
  out->dtypes = xpj_dtypes();
  out->num_attributes = p->attrs.n;
  out->attributes = p->attrs.a;
  return XRT_OK;
}

/* ---- wrap and unwrap ---- */

static char *xpj_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = (char *)malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static void xpj_plugin_free(xpj_plugin *p) {
  if (!p) return;
  xpj_attrs_free(&p->attrs);
  free(p->name);
  free(p->label);
  free(p);
}

/* A new wrapper of api (checked) named name. */
static xrt_status xpj_plugin_new(const PJRT_Api *api, const char *name,
                                 const char *label, xpj_plugin **out) {
  xpj_plugin *p = (xpj_plugin *)calloc(1, sizeof *p);
  if (!p)
    return xrt_report_error(XRT_RESOURCE_EXHAUSTED, "out of memory "
                            "wrapping PJRT plugin '%s'", name);
  memcpy(&p->fn, api, api->struct_size < sizeof p->fn ? api->struct_size
                                                      : sizeof p->fn);
  p->fn.struct_size = sizeof p->fn;
  p->name = xpj_strdup(name);
  char at[1024];
  snprintf(at, sizeof at, "%s%s%s", label ? " (" : "", label ? label : "",
           label ? ")" : "");
  p->label = xpj_strdup(at);
  if (!p->name || !p->label) {
    xpj_plugin_free(p);
    return xrt_report_error(XRT_RESOURCE_EXHAUSTED, "out of memory "
                            "wrapping PJRT plugin '%s'", name);
  }
  snprintf(p->version, sizeof p->version, "PJRT C API %d.%d",
           api->pjrt_api_version.major_version,
           api->pjrt_api_version.minor_version);
  *out = p;
  return XRT_OK;
}

static void xpj_table_fill(xpj_plugin *p) {
  xrt_plugin_api *t = &p->table;
  t->struct_size = sizeof *t;
  t->abi_major = XRT_PLUGIN_ABI_MAJOR;
  t->abi_minor = XRT_PLUGIN_ABI_MINOR;
  t->name = p->name;
  t->version = p->version;
  t->platform_describe = xpj_platform_describe;
  xpj_client_fill(t);
  xpj_buffer_fill(t);
  xpj_compile_fill(t);
  xpj_execute_fill(t);
}

xrt_status xrt_pjrt_plugin_wrap(const void *pjrt_api, const char *name,
                                const char *label,
                                const xrt_plugin_api **out_table) {
  if (out_table) *out_table = NULL;
  if (!name) name = "pjrt";
  if (!pjrt_api || !out_table)
    return xrt_report_error(XRT_INVALID_ARGUMENT, "xrt_pjrt_plugin_wrap: "
                            "%s is NULL", pjrt_api ? "out_table" : "pjrt_api");
  const PJRT_Api *api = (const PJRT_Api *)pjrt_api;
  char who[1200];
  xpj_who(who, sizeof who, name, label);
  xrt_status s = xpj_check_table(api, who);
  xpj_plugin *p = NULL;
  if (!s) s = xpj_plugin_new(api, name, label, &p);
  if (!s) s = xpj_check_required(&p->fn, who);
  if (!s) s = xpj_initialize(p);
  if (!s) s = xpj_attributes(p);
  if (s) {
    xpj_plugin_free(p);
    return s;
  }
  xpj_table_fill(p);
  *out_table = &p->table;
  return XRT_OK;
}

void xrt_pjrt_plugin_unwrap(const xrt_plugin_api *table) {
  xpj_plugin_free((xpj_plugin *)(uintptr_t)table);
}
