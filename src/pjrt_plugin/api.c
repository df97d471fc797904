/*
 * src/pjrt_plugin/api.c - GetPjrtApi and its table, the plugin's
 * attributes, execute contexts, and the functions xrt does not implement
 * (each returns an UNIMPLEMENTED PJRT_Error naming itself: the table has
 * no NULL entry).
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 *
 * Plugin attributes (PJRT_Plugin_Attributes, alive for the process):
 *   xla_version                int64       2, as OpenXLA's own plugins say
 *   stablehlo_current_version  int64 list  [major, minor, patch] of
 *                                          xrt_stablehlo_version(): hosts
 *                                          (JAX) emit StableHLO for it
 *   stablehlo_minimum_version  int64 list  the oldest version the
 *                                          simulator accepts
 *   xrt_version                string      XRT_VERSION_STRING
 */
#include "internal.h"

#if defined(_WIN32)
#define XP_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define XP_EXPORT __attribute__((visibility("default")))
#else
#define XP_EXPORT
#endif

/* ---- the functions xrt does not implement ---- */

#define XP_UNIMPLEMENTED_LIST(X)                   \
  X(PJRT_Client_TopologyDescription)               \
  X(PJRT_Client_CreateViewOfDeviceBuffer)          \
  X(PJRT_Client_CreateBuffersForAsyncHostToDevice) \
  X(PJRT_Device_MemoryStats)                       \
  X(PJRT_Executable_GetCostAnalysis)               \
  X(PJRT_Executable_OptimizedProgram)              \
  X(PJRT_Executable_Serialize)                     \
  X(PJRT_Executable_DeserializeAndLoad)            \
  X(PJRT_Executable_GetCompiledMemoryStats)        \
  X(PJRT_Buffer_UnsafePointer)                     \
  X(PJRT_Buffer_IncreaseExternalReferenceCount)    \
  X(PJRT_Buffer_DecreaseExternalReferenceCount)    \
  X(PJRT_Buffer_OpaqueDeviceMemoryDataPointer)     \
  X(PJRT_Buffer_CopyRawToHost)                     \
  X(PJRT_CopyToDeviceStream_Destroy)               \
  X(PJRT_CopyToDeviceStream_AddChunk)              \
  X(PJRT_CopyToDeviceStream_TotalBytes)            \
  X(PJRT_CopyToDeviceStream_GranuleSize)           \
  X(PJRT_CopyToDeviceStream_CurrentBytes)          \
  X(PJRT_TopologyDescription_Create)               \
  X(PJRT_TopologyDescription_Destroy)              \
  X(PJRT_TopologyDescription_PlatformName)         \
  X(PJRT_TopologyDescription_PlatformVersion)      \
  X(PJRT_TopologyDescription_GetDeviceDescriptions) \
  X(PJRT_TopologyDescription_Serialize)            \
  X(PJRT_TopologyDescription_Attributes)           \
  X(PJRT_Compile)                                  \
  X(PJRT_AsyncHostToDeviceTransferManager_Destroy) \
  X(PJRT_AsyncHostToDeviceTransferManager_TransferData)

#define XP_DEFINE_UNIMPLEMENTED(name)                                   \
  static PJRT_Error *xp_unimplemented_##name(name##_Args *args) {       \
    (void)args;                                                         \
    return xp_error(PJRT_Error_Code_UNIMPLEMENTED,                      \
                    "%s is not implemented by xrt", #name);             \
  }
XP_UNIMPLEMENTED_LIST(XP_DEFINE_UNIMPLEMENTED)

static void xp_unimplemented_register(PJRT_Api *api) {
#define XP_SET_UNIMPLEMENTED(name) api->name = xp_unimplemented_##name;
  XP_UNIMPLEMENTED_LIST(XP_SET_UNIMPLEMENTED)
#undef XP_SET_UNIMPLEMENTED
}

/* ---- plugin ---- */

enum { XP_NUM_ATTRIBUTES = 4, XP_VERSION_PARTS = 3 };

static struct {
  int64_t current[XP_VERSION_PARTS], minimum[XP_VERSION_PARTS];
  PJRT_NamedValue values[XP_NUM_ATTRIBUTES];
} xp_attrs;
static pthread_once_t xp_attrs_once = PTHREAD_ONCE_INIT;

/* "1.8.0" into {1, 8, 0}; missing parts are 0. */
static void xp_version_parse(const char *s, int64_t out[XP_VERSION_PARTS]) {
  for (int i = 0; i < XP_VERSION_PARTS; i++) {
    out[i] = 0;
    while (s && *s >= '0' && *s <= '9') out[i] = out[i] * 10 + (*s++ - '0');
    if (s && *s == '.') s++;
  }
}

/* The simulator's oldest StableHLO version, from its plugin description
 * (through a context of our own: the host's XRT_PLUGINS is not ours). */
static void xp_minimum_version(int64_t out[XP_VERSION_PARTS]) {
  xrt_context_options co;
  xrt_context_options_init(&co);
  co.allocator = xp_allocator();
  co.env_plugins = false;
  xrt_context *ctx = NULL;
  xrt_plugin_info info;
  const char *min = NULL;
  if (!xrt_context_create(&co, &ctx)) {
    xrt_plugin *p = xrt_context_find_plugin(ctx, "sim");
    if (p && !xrt_plugin_get_info(p, &info)) min = info.stablehlo_min;
  }
  /* Without it, claim no more than the current version. */
  xp_version_parse(min ? min : xrt_stablehlo_version(), out);
  if (ctx) xrt_context_release(ctx);
}

static void xp_attr(PJRT_NamedValue *v, const char *name,
                    PJRT_NamedValue_Type type, size_t value_size) {
  v->struct_size = PJRT_NamedValue_STRUCT_SIZE;
  v->extension_start = NULL;
  v->name = name;
  v->name_size = strlen(name);
  v->type = type;
  v->value_size = value_size;
}

static void xp_attrs_init(void) {
  PJRT_NamedValue *v = xp_attrs.values;
  xp_version_parse(xrt_stablehlo_version(), xp_attrs.current);
  xp_minimum_version(xp_attrs.minimum);
  xp_attr(&v[0], "xla_version", PJRT_NamedValue_kInt64, 1);
  v[0].int64_value = 2;
  xp_attr(&v[1], "stablehlo_current_version", PJRT_NamedValue_kInt64List,
          XP_VERSION_PARTS);
  v[1].int64_array_value = xp_attrs.current;
  xp_attr(&v[2], "stablehlo_minimum_version", PJRT_NamedValue_kInt64List,
          XP_VERSION_PARTS);
  v[2].int64_array_value = xp_attrs.minimum;
  xp_attr(&v[3], "xrt_version", PJRT_NamedValue_kString,
          sizeof XRT_VERSION_STRING - 1);
  v[3].string_value = XRT_VERSION_STRING;
}

static PJRT_Error *xp_plugin_initialize(PJRT_Plugin_Initialize_Args *args) {
  XP_ARGS("PJRT_Plugin_Initialize", args,
          PJRT_Plugin_Initialize_Args_STRUCT_SIZE);
  pthread_once(&xp_attrs_once, xp_attrs_init);
  return NULL;
}

/* PJRT's struct size for these args stops at `attributes` (upstream's
 * traits name it as the last member), so num_attributes is written
 * whenever the struct holds `attributes`. */
static PJRT_Error *xp_plugin_attributes(PJRT_Plugin_Attributes_Args *args) {
  XP_ARGS("PJRT_Plugin_Attributes", args,
          PJRT_Plugin_Attributes_Args_STRUCT_SIZE);
  pthread_once(&xp_attrs_once, xp_attrs_init);
  args->attributes = xp_attrs.values;
  args->num_attributes = XP_NUM_ATTRIBUTES;
  return NULL;
}

/* ---- execute contexts: nothing to carry yet ---- */

typedef struct xp_exec_context {
  PJRT_ExecuteContext *handle;
} xp_exec_context;

static PJRT_Error *xp_context_create(PJRT_ExecuteContext_Create_Args *args) {
  static const char fn[] = "PJRT_ExecuteContext_Create";
  XP_ARGS(fn, args, PJRT_ExecuteContext_Create_Args_STRUCT_SIZE);
  args->context = NULL;
  xp_exec_context *x = (xp_exec_context *)xp_malloc(sizeof *x);
  if (x) x->handle = (PJRT_ExecuteContext *)xp_handle_new(x, XP_KIND_EXEC_CONTEXT);
  if (!x || !x->handle) {
    xp_free(x);
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  }
  args->context = x->handle;
  return NULL;
}

static PJRT_Error *xp_context_destroy(PJRT_ExecuteContext_Destroy_Args *args) {
  static const char fn[] = "PJRT_ExecuteContext_Destroy";
  XP_ARGS(fn, args, PJRT_ExecuteContext_Destroy_Args_STRUCT_SIZE);
  if (!args->context) return NULL;
  xp_exec_context *x = (xp_exec_context *)xp_handle_retire(
      args->context, XP_KIND_EXEC_CONTEXT);
  if (!x) return xp_error_stale(fn, "args->context", "PJRT_ExecuteContext");
  xp_free(x);
  return NULL;
}

/* ---- the table ---- */

static PJRT_Api xp_api;
static pthread_once_t xp_api_once = PTHREAD_ONCE_INIT;
static int xp_api_complete;

/* Whether every function pointer of the table is set. */
static int xp_table_complete(const PJRT_Api *api) {
  typedef void (*fn_ptr)(void);
  const unsigned char *p = (const unsigned char *)api;
  for (size_t off = offsetof(PJRT_Api, PJRT_Error_Destroy);
       off + sizeof(fn_ptr) <= PJRT_Api_STRUCT_SIZE; off += sizeof(fn_ptr)) {
    fn_ptr f;
    memcpy(&f, p + off, sizeof f);
    if (!f) return 0;
  }
  return 1;
}

static void xp_api_init(void) {
  PJRT_Api *api = &xp_api;
  api->struct_size = PJRT_Api_STRUCT_SIZE;
  api->extension_start = NULL;
  api->pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api->pjrt_api_version.extension_start = NULL;
  api->pjrt_api_version.major_version = PJRT_API_MAJOR;
  api->pjrt_api_version.minor_version = PJRT_API_MINOR;
  xp_unimplemented_register(api);
  xp_error_register(api);
  api->PJRT_Plugin_Initialize = xp_plugin_initialize;
  api->PJRT_Plugin_Attributes = xp_plugin_attributes;
  api->PJRT_ExecuteContext_Create = xp_context_create;
  api->PJRT_ExecuteContext_Destroy = xp_context_destroy;
  xp_event_register(api);
  xp_client_register(api);
  xp_device_register(api);
  xp_buffer_register(api);
  xp_compile_register(api);
  xp_executable_register(api);
  xp_execute_register(api);
  xp_api_complete = xp_table_complete(api);
}

/* The one exported symbol.  NULL only if the table were incomplete (a
 * build error the PJRT host test would catch). */
XP_EXPORT const PJRT_Api *GetPjrtApi(void);
XP_EXPORT const PJRT_Api *GetPjrtApi(void) {
  pthread_once(&xp_api_once, xp_api_init);
  return xp_api_complete ? &xp_api : NULL;
}
