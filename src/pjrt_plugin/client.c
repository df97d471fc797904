/*
 * src/pjrt_plugin/client.c - PJRT_Client: creation from named-value
 * options, destruction, platform, the device and memory lists, default
 * device assignments.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 *
 * PJRT_Client_Create's create_options (PJRT_NamedValue; unknown names are
 * ignored, a known name with another type is INVALID_ARGUMENT):
 *   num_devices         int64  simulated devices (default 1; 1..1024)
 *   memory_per_device   int64  bytes of memory per device (default 4 GiB;
 *                              positive)
 *   threads_per_device  int64  worker threads per device for large ops
 *                              (default 0: the cores divided among devices)
 *   inject_fault_device int64  a device whose next execution fails, as a
 *                              hardware fault would (xrt_device_inject_fault)
 *   inject_fault_after  int64  ... after this many of its kernels (default
 *                              0); either of the two arms the fault (the
 *                              device defaults to 0)
 *   inject_fault_kind   string what fails instead of a kernel: "kernel",
 *                              "transfer", "collective" or "alloc"
 *                              (xrt_device_inject_fault_kind: the
 *                              (after + 1)-th operation of that kind)
 *
 * The platform name is "xrt-sim" (XP_PLATFORM_NAME): xrt's runtime on its
 * simulator's devices.  The platform version is "xrt X.Y.Z (sim V)".
 *
 * Each client gets an xrt context of its own, with the built-in plugins
 * and without XRT_PLUGINS: that variable is for the host's xrt (which may
 * list this very library, loaded through xrt's PJRT loader), not for the
 * copy of xrt inside it.  Clients are single-process (process 0 of 1),
 * whatever RANK or WORLD_SIZE say.
 */
#include "internal.h"

/* The create options, as read. */
typedef struct xp_create_options {
  int64_t num_devices;        /* -1: default */
  int64_t memory_per_device;  /* -1: default */
  int64_t threads_per_device;
  int fault;                  /* a fault option was given */
  int64_t fault_device, fault_after;
  int fault_kind;             /* -1: a kernel fault after N kernels */
} xp_create_options;

/* A known option: its name, type and where it goes. */
typedef enum xp_option_slot {
  XP_OPT_NUM_DEVICES,
  XP_OPT_MEMORY,
  XP_OPT_THREADS,
  XP_OPT_FAULT_DEVICE,
  XP_OPT_FAULT_AFTER,
  XP_OPT_FAULT_KIND
} xp_option_slot;

static const struct {
  const char *name;
  PJRT_NamedValue_Type type;
  xp_option_slot slot;
} xp_options[] = {
    {"num_devices", PJRT_NamedValue_kInt64, XP_OPT_NUM_DEVICES},
    {"memory_per_device", PJRT_NamedValue_kInt64, XP_OPT_MEMORY},
    {"threads_per_device", PJRT_NamedValue_kInt64, XP_OPT_THREADS},
    {"inject_fault_device", PJRT_NamedValue_kInt64, XP_OPT_FAULT_DEVICE},
    {"inject_fault_after", PJRT_NamedValue_kInt64, XP_OPT_FAULT_AFTER},
    {"inject_fault_kind", PJRT_NamedValue_kString, XP_OPT_FAULT_KIND},
};

static const struct {
  const char *name;
  xrt_fault_kind kind;
} xp_fault_kinds[] = {
    {"kernel", XRT_FAULT_KERNEL},
    {"transfer", XRT_FAULT_TRANSFER},
    {"collective", XRT_FAULT_COLLECTIVE},
    {"alloc", XRT_FAULT_ALLOC},
};

static const char *xp_type_name(PJRT_NamedValue_Type t) {
  switch (t) {
  case PJRT_NamedValue_kString: return "string";
  case PJRT_NamedValue_kInt64: return "int64";
  case PJRT_NamedValue_kInt64List: return "int64 list";
  case PJRT_NamedValue_kFloat: return "float";
  case PJRT_NamedValue_kBool: return "bool";
  }
  return "unknown type";
}

static int xp_name_is(const PJRT_NamedValue *v, const char *name) {
  size_t n = strlen(name);
  return v->name_size == n && memcmp(v->name, name, n) == 0;
}

static PJRT_Error *xp_option_kind(const char *fn, const PJRT_NamedValue *v,
                                  xp_create_options *o) {
  if (!v->string_value && v->value_size)
    return xp_error_null(fn, "the value of create option inject_fault_kind");
  for (size_t k = 0; k < sizeof xp_fault_kinds / sizeof *xp_fault_kinds; k++) {
    size_t n = strlen(xp_fault_kinds[k].name);
    if (v->value_size == n && memcmp(v->string_value, xp_fault_kinds[k].name,
                                     n) == 0) {
      o->fault_kind = (int)xp_fault_kinds[k].kind;
      o->fault = 1;
      return NULL;
    }
  }
  return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                  "%s: create option inject_fault_kind is \"%.*s\"; expected "
                  "kernel, transfer, collective or alloc",
                  fn, (int)v->value_size,
                  v->string_value ? v->string_value : "");
}

static PJRT_Error *xp_option_set(const char *fn, const PJRT_NamedValue *v,
                                 xp_option_slot slot, xp_create_options *o) {
  int64_t x = v->int64_value;
  if (slot != XP_OPT_FAULT_KIND && x < 0)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: create option %.*s is %lld; it cannot be negative",
                    fn, (int)v->name_size, v->name, (long long)x);
  switch (slot) {
  case XP_OPT_NUM_DEVICES: o->num_devices = x; break;
  case XP_OPT_MEMORY: o->memory_per_device = x; break;
  case XP_OPT_THREADS: o->threads_per_device = x; break;
  case XP_OPT_FAULT_DEVICE: o->fault_device = x; o->fault = 1; break;
  case XP_OPT_FAULT_AFTER: o->fault_after = x; o->fault = 1; break;
  case XP_OPT_FAULT_KIND: return xp_option_kind(fn, v, o);
  }
  return NULL;
}

static PJRT_Error *xp_option_read(const char *fn, const PJRT_NamedValue *v,
                                  size_t i, xp_create_options *o) {
  if (v->struct_size < PJRT_NamedValue_STRUCT_SIZE)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: create_options[%zu].struct_size is %zu, at least %zu "
                    "expected", fn, i, v->struct_size,
                    (size_t)PJRT_NamedValue_STRUCT_SIZE);
  if (!v->name && v->name_size)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: create_options[%zu].name is NULL", fn, i);
  for (size_t k = 0; k < sizeof xp_options / sizeof *xp_options; k++) {
    if (!xp_name_is(v, xp_options[k].name)) continue;
    if (v->type != xp_options[k].type)
      return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                      "%s: create option %s must be of type %s, not %s", fn,
                      xp_options[k].name, xp_type_name(xp_options[k].type),
                      xp_type_name(v->type));
    return xp_option_set(fn, v, xp_options[k].slot, o);
  }
  return NULL; /* unknown names are for other plugins */
}

static PJRT_Error *xp_options_read(const char *fn,
                                   const PJRT_Client_Create_Args *args,
                                   xp_create_options *o) {
  memset(o, 0, sizeof *o);
  o->num_devices = o->memory_per_device = -1;
  o->fault_kind = -1;
  if (args->num_options && !args->create_options)
    return xp_error_null(fn, "args->create_options");
  for (size_t i = 0; i < args->num_options; i++) {
    PJRT_Error *e = xp_option_read(fn, &args->create_options[i], i, o);
    if (e) return e;
  }
  if (o->num_devices != -1 && (o->num_devices < 1 || o->num_devices > 1024))
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: create option num_devices is %lld; the simulator "
                    "has 1 to 1024 devices", fn, (long long)o->num_devices);
  if (o->memory_per_device == 0)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: create option memory_per_device is 0", fn);
  if (o->threads_per_device > 4096)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: create option threads_per_device is %lld; at most "
                    "4096", fn, (long long)o->threads_per_device);
  return NULL;
}

/* ---- creation and destruction ---- */

static void xp_client_free(xp_client *c) {
  if (c->devices)
    for (int i = 0; i < c->num_devices; i++) xp_device_fini(&c->devices[i]);
  if (c->xc) xrt_client_release(c->xc);
  if (c->context) xrt_context_release(c->context);
  xp_free(c->devices);
  xp_free(c->device_list);
  xp_free(c->memory_list);
  xp_free(c->platform_version);
  xp_free(c);
}

static xrt_status xp_client_open(const xp_create_options *o, xp_client *c) {
  xrt_context_options co;
  xrt_context_options_init(&co);
  co.allocator = xp_allocator(); /* xrt's allocations are the plugin's */
  co.builtin_plugins = true;
  co.env_plugins = false;
  xrt_status s = xrt_context_create(&co, &c->context);
  if (s) return s;
  xrt_client_options opts;
  xrt_client_options_init(&opts);
  opts.plugin = "sim";
  opts.context = c->context;
  opts.allocator = xp_allocator();
  opts.topology.process_index = 0;
  opts.topology.process_count = 1;
  opts.topology.host_index = 0;
  opts.topology.local_rank = 0;
  opts.topology.local_world_size = 1;
  if (o->num_devices > 0) opts.num_devices = (int)o->num_devices;
  if (o->memory_per_device > 0)
    opts.device_memory_bytes = (uint64_t)o->memory_per_device;
  opts.threads_per_device = (int)o->threads_per_device;
  return xrt_client_create(&opts, &c->xc);
}

static PJRT_Error *xp_client_devices_init(const char *fn, xp_client *c) {
  int n = xrt_client_device_count(c->xc);
  if (n < 0) return xp_error_xrt(fn, xrt_last_status());
  c->num_devices = n;
  c->devices = (xp_device *)xp_calloc((size_t)n, sizeof *c->devices);
  c->device_list =
      (PJRT_Device **)xp_calloc((size_t)n + 1, sizeof(PJRT_Device *));
  c->memory_list =
      (PJRT_Memory **)xp_calloc((size_t)n + 1, sizeof(PJRT_Memory *));
  if (!c->devices || !c->device_list || !c->memory_list)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory (device lists)", fn);
  for (int i = 0; i < n; i++) {
    PJRT_Error *e = xp_device_init(c, &c->devices[i], i);
    if (e) return e;
    c->device_list[i] = c->devices[i].handle;
    c->memory_list[i] = c->devices[i].memory_handle;
  }
  return NULL;
}

static PJRT_Error *xp_client_inject(const char *fn, xp_client *c,
                                    const xp_create_options *o) {
  if (!o->fault) return NULL;
  if (o->fault_device >= c->num_devices)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: create option inject_fault_device is %lld, but the "
                    "client has %d device(s)", fn, (long long)o->fault_device,
                    c->num_devices);
  xrt_device *xd = c->devices[o->fault_device].xd;
  xrt_status s = o->fault_kind < 0
                     ? xrt_device_inject_fault(xd, o->fault_after)
                     : xrt_device_inject_fault_kind(
                           xd, (xrt_fault_kind)o->fault_kind, o->fault_after);
  return s ? xp_error_xrt(fn, s) : NULL;
}

static PJRT_Error *xp_client_describe(const char *fn, xp_client *c) {
  xrt_plugin_info info;
  xrt_status s = xrt_plugin_get_info(xrt_client_plugin(c->xc), &info);
  if (s) return xp_error_xrt(fn, s);
  c->platform_version = xp_format("xrt %s (%s %s)", XRT_VERSION_STRING,
                                  info.platform_name ? info.platform_name : "sim",
                                  info.platform_version ? info.platform_version
                                                        : "");
  if (!c->platform_version)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  return NULL;
}

static PJRT_Error *xp_client_create(PJRT_Client_Create_Args *args) {
  static const char fn[] = "PJRT_Client_Create";
  XP_ARGS(fn, args, PJRT_Client_Create_Args_STRUCT_SIZE);
  args->client = NULL;
  xp_create_options o;
  PJRT_Error *e = xp_options_read(fn, args, &o);
  if (e) return e;
  xp_client *c = (xp_client *)xp_calloc(1, sizeof *c);
  if (!c)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory", fn);
  xrt_status s = xp_client_open(&o, c);
  if (s) e = xp_error_xrt(fn, s);
  if (!e) e = xp_client_devices_init(fn, c);
  if (!e) e = xp_client_inject(fn, c, &o);
  if (!e) e = xp_client_describe(fn, c);
  if (!e && !(c->handle = (PJRT_Client *)xp_handle_new(c, XP_KIND_CLIENT)))
    e = xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                 "%s: out of host memory (handles)", fn);
  if (e) {
    xp_client_free(c);
    return e;
  }
  args->client = c->handle;
  return NULL;
}

/* Releases the xrt client (which waits for its queued work and frees its
 * buffers and executables); PJRT objects still alive that refer to it
 * find its handles dead from then on. */
static PJRT_Error *xp_client_destroy(PJRT_Client_Destroy_Args *args) {
  static const char fn[] = "PJRT_Client_Destroy";
  XP_ARGS(fn, args, PJRT_Client_Destroy_Args_STRUCT_SIZE);
  if (!args->client) return NULL;
  xp_client *c = (xp_client *)xp_handle_retire(args->client, XP_KIND_CLIENT);
  if (!c) return xp_error_stale(fn, "args->client", "PJRT_Client");
  xp_client_free(c);
  return NULL;
}

XP_PRIVATE xp_device *xp_client_device_of(xp_client *c, const xrt_device *xd) {
  int id = xrt_device_id(xd);
  if (id < 0 || id >= c->num_devices || c->devices[id].xd != xd) return NULL;
  return &c->devices[id];
}

/* The client of args->client, or NULL with *err set. */
static xp_client *xp_client_arg(const char *fn, PJRT_Client *client,
                                PJRT_Error **err) {
  xp_client *c = xp_client_get(client);
  if (!c)
    *err = client ? xp_error_stale(fn, "args->client", "PJRT_Client")
                  : xp_error_null(fn, "args->client");
  return c;
}

#define XP_CLIENT_ARG(fn, args, type)                          \
  XP_ARGS(fn, args, type##_STRUCT_SIZE);                       \
  PJRT_Error *err_ = NULL;                                     \
  xp_client *c = xp_client_arg(fn, args->client, &err_);       \
  if (!c) return err_

static PJRT_Error *xp_platform_name(PJRT_Client_PlatformName_Args *args) {
  XP_CLIENT_ARG("PJRT_Client_PlatformName", args,
                PJRT_Client_PlatformName_Args);
  (void)c;
  args->platform_name = XP_PLATFORM_NAME;
  args->platform_name_size = sizeof XP_PLATFORM_NAME - 1;
  return NULL;
}

static PJRT_Error *xp_process_index(PJRT_Client_ProcessIndex_Args *args) {
  XP_CLIENT_ARG("PJRT_Client_ProcessIndex", args,
                PJRT_Client_ProcessIndex_Args);
  (void)c;
  args->process_index = 0; /* clients are single-process */
  return NULL;
}

static PJRT_Error *xp_platform_version(PJRT_Client_PlatformVersion_Args *args) {
  XP_CLIENT_ARG("PJRT_Client_PlatformVersion", args,
                PJRT_Client_PlatformVersion_Args);
  args->platform_version = c->platform_version;
  args->platform_version_size = strlen(c->platform_version);
  return NULL;
}

static PJRT_Error *xp_devices(PJRT_Client_Devices_Args *args) {
  XP_CLIENT_ARG("PJRT_Client_Devices", args, PJRT_Client_Devices_Args);
  args->devices = c->device_list;
  args->num_devices = (size_t)c->num_devices;
  return NULL;
}

static PJRT_Error *xp_addressable_devices(
    PJRT_Client_AddressableDevices_Args *args) {
  XP_CLIENT_ARG("PJRT_Client_AddressableDevices", args,
                PJRT_Client_AddressableDevices_Args);
  args->addressable_devices = c->device_list; /* every one: one process */
  args->num_addressable_devices = (size_t)c->num_devices;
  return NULL;
}

static PJRT_Error *xp_lookup(const char *fn, xp_client *c, int id,
                             PJRT_Device **out) {
  if (id < 0 || id >= c->num_devices)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: no device %d (the client has devices 0..%d)", fn, id,
                    c->num_devices - 1);
  *out = c->devices[id].handle;
  return NULL;
}

static PJRT_Error *xp_lookup_device(PJRT_Client_LookupDevice_Args *args) {
  static const char fn[] = "PJRT_Client_LookupDevice";
  XP_CLIENT_ARG(fn, args, PJRT_Client_LookupDevice_Args);
  return xp_lookup(fn, c, args->id, &args->device);
}

static PJRT_Error *xp_lookup_addressable(
    PJRT_Client_LookupAddressableDevice_Args *args) {
  static const char fn[] = "PJRT_Client_LookupAddressableDevice";
  XP_CLIENT_ARG(fn, args, PJRT_Client_LookupAddressableDevice_Args);
  return xp_lookup(fn, c, args->local_hardware_id, &args->addressable_device);
}

static PJRT_Error *xp_addressable_memories(
    PJRT_Client_AddressableMemories_Args *args) {
  XP_CLIENT_ARG("PJRT_Client_AddressableMemories", args,
                PJRT_Client_AddressableMemories_Args);
  args->addressable_memories = c->memory_list;
  args->num_addressable_memories = (size_t)c->num_devices;
  return NULL;
}

/* Logical id i (replica * num_partitions + partition) on device i. */
static PJRT_Error *xp_default_assignment(
    PJRT_Client_DefaultDeviceAssignment_Args *args) {
  static const char fn[] = "PJRT_Client_DefaultDeviceAssignment";
  XP_CLIENT_ARG(fn, args, PJRT_Client_DefaultDeviceAssignment_Args);
  int64_t n = (int64_t)args->num_replicas * args->num_partitions;
  if (args->num_replicas < 1 || args->num_partitions < 1 ||
      n > c->num_devices)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: %d replica(s) x %d partition(s) do not fit the "
                    "client's %d device(s)", fn, args->num_replicas,
                    args->num_partitions, c->num_devices);
  if (args->default_assignment_size < (size_t)n)
    return xp_error(PJRT_Error_Code_INVALID_ARGUMENT,
                    "%s: default_assignment_size is %zu, %lld needed", fn,
                    args->default_assignment_size, (long long)n);
  if (!args->default_assignment)
    return xp_error_null(fn, "args->default_assignment");
  for (int64_t i = 0; i < n; i++) args->default_assignment[i] = (int)i;
  return NULL;
}

XP_PRIVATE void xp_client_register(PJRT_Api *api) {
  api->PJRT_Client_Create = xp_client_create;
  api->PJRT_Client_Destroy = xp_client_destroy;
  api->PJRT_Client_PlatformName = xp_platform_name;
  api->PJRT_Client_ProcessIndex = xp_process_index;
  api->PJRT_Client_PlatformVersion = xp_platform_version;
  api->PJRT_Client_Devices = xp_devices;
  api->PJRT_Client_AddressableDevices = xp_addressable_devices;
  api->PJRT_Client_LookupDevice = xp_lookup_device;
  api->PJRT_Client_LookupAddressableDevice = xp_lookup_addressable;
  api->PJRT_Client_AddressableMemories = xp_addressable_memories;
  api->PJRT_Client_DefaultDeviceAssignment = xp_default_assignment;
}
