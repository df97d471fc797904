/*
 * src/pjrt_plugin/device.c - PJRT_Device, PJRT_DeviceDescription and
 * PJRT_Memory: one record per xrt device, named by three handles (the
 * device, its description, its one memory), owned by the client.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 *
 * A device's PJRT id and local hardware id are its xrt id (its index in
 * the client); its memory has the same id, kind "device" (kind id 0).
 * Description attributes are the device's xrt attributes (int64, float,
 * string, bool), strings borrowed from the plugin for the client's life.
 */
#include "internal.h"

static PJRT_NamedValue_Type xp_attr_type(xrt_attribute_type t) {
  switch (t) {
  case XRT_ATTRIBUTE_INT: return PJRT_NamedValue_kInt64;
  case XRT_ATTRIBUTE_FLOAT: return PJRT_NamedValue_kFloat;
  case XRT_ATTRIBUTE_STRING: return PJRT_NamedValue_kString;
  case XRT_ATTRIBUTE_BOOL: return PJRT_NamedValue_kBool;
  }
  return PJRT_NamedValue_kString;
}

static void xp_attr_convert(const xrt_attribute *a, PJRT_NamedValue *v) {
  memset(v, 0, sizeof *v);
  v->struct_size = PJRT_NamedValue_STRUCT_SIZE;
  v->name = a->name ? a->name : "";
  v->name_size = strlen(v->name);
  v->type = xp_attr_type(a->type);
  v->value_size = 1;
  switch (a->type) {
  case XRT_ATTRIBUTE_INT: v->int64_value = a->int_value; break;
  case XRT_ATTRIBUTE_FLOAT: v->float_value = (float)a->float_value; break;
  case XRT_ATTRIBUTE_BOOL: v->bool_value = a->bool_value; break;
  case XRT_ATTRIBUTE_STRING:
    v->string_value = a->string_value ? a->string_value : "";
    v->value_size = strlen(v->string_value);
    break;
  }
}

static PJRT_Error *xp_device_attributes(const char *fn, xp_device *d) {
  int n = xrt_device_attribute_count(d->xd);
  if (n < 0) return xp_error_xrt(fn, xrt_last_status());
  d->attributes =
      (PJRT_NamedValue *)xp_calloc((size_t)n + 1, sizeof *d->attributes);
  if (!d->attributes)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory (device attributes)", fn);
  for (int i = 0; i < n; i++) {
    xrt_attribute a;
    xrt_status s = xrt_device_attribute_get(d->xd, i, &a);
    if (s) return xp_error_xrt(fn, s);
    xp_attr_convert(&a, &d->attributes[d->num_attributes++]);
  }
  return NULL;
}

static PJRT_Error *xp_device_strings(const char *fn, xp_device *d) {
  const char *kind = xrt_device_kind(d->xd);
  if (!kind) kind = "sim";
  d->debug_string = xp_format("%s:%d (an xrt %s device)", XP_PLATFORM_NAME,
                              d->index, kind);
  d->to_string = xp_format("XrtSimDevice(id=%d)", d->index);
  d->mem_debug_string =
      xp_format("%s:%d memory (kind %s)", XP_PLATFORM_NAME, d->index,
                XP_MEMORY_KIND);
  d->mem_to_string = xp_format("DeviceMemory(id=%d)", d->index);
  if (!d->debug_string || !d->to_string || !d->mem_debug_string ||
      !d->mem_to_string)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory (device strings)", fn);
  return NULL;
}

XP_PRIVATE PJRT_Error *xp_device_init(xp_client *c, xp_device *d, int index) {
  static const char fn[] = "PJRT_Client_Create";
  d->client = c;
  d->index = index;
  d->xd = xrt_client_device(c->xc, index);
  if (!d->xd) return xp_error_xrt(fn, xrt_last_status());
  d->xobj = xrt__pjrt_device_obj(d->xd);
  PJRT_Error *e = xp_device_attributes(fn, d);
  if (!e) e = xp_device_strings(fn, d);
  if (e) return e;
  d->handle = (PJRT_Device *)xp_handle_new(d, XP_KIND_DEVICE);
  d->desc_handle =
      (PJRT_DeviceDescription *)xp_handle_new(d, XP_KIND_DESCRIPTION);
  d->memory_handle = (PJRT_Memory *)xp_handle_new(d, XP_KIND_MEMORY);
  if (!d->handle || !d->desc_handle || !d->memory_handle)
    return xp_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                    "%s: out of host memory (handles)", fn);
  return NULL;
}

XP_PRIVATE void xp_device_fini(xp_device *d) {
  if (d->handle) xp_handle_retire(d->handle, XP_KIND_DEVICE);
  if (d->desc_handle) xp_handle_retire(d->desc_handle, XP_KIND_DESCRIPTION);
  if (d->memory_handle) xp_handle_retire(d->memory_handle, XP_KIND_MEMORY);
  xp_free(d->attributes);
  xp_free(d->debug_string);
  xp_free(d->to_string);
  xp_free(d->mem_debug_string);
  xp_free(d->mem_to_string);
}

/* The record behind a handle of the given kind, or NULL with *err set. */
static xp_device *xp_record_arg(const char *fn, const void *h, xp_kind kind,
                                const char *what, const char *type,
                                PJRT_Error **err) {
  xp_device *d = (xp_device *)xp_handle_get(h, kind);
  if (!d) *err = h ? xp_error_stale(fn, what, type) : xp_error_null(fn, what);
  return d;
}

/* Starts an entry point on a device description / device / memory. */
#define XP_RECORD_ARG(fn, args, type, field, kind, ptype)                    \
  XP_ARGS(fn, args, type##_STRUCT_SIZE);                                     \
  PJRT_Error *err_ = NULL;                                                   \
  xp_device *d = xp_record_arg(fn, args->field, kind, "args->" #field, ptype, \
                               &err_);                                       \
  if (!d) return err_
#define XP_DESC_ARG(fn, args, type)                                    \
  XP_RECORD_ARG(fn, args, type, device_description, XP_KIND_DESCRIPTION, \
                "PJRT_DeviceDescription")
#define XP_DEVICE_ARG(fn, args, type) \
  XP_RECORD_ARG(fn, args, type, device, XP_KIND_DEVICE, "PJRT_Device")
#define XP_MEMORY_ARG(fn, args, type) \
  XP_RECORD_ARG(fn, args, type, memory, XP_KIND_MEMORY, "PJRT_Memory")

/* ---- device descriptions ---- */

static PJRT_Error *xp_desc_id(PJRT_DeviceDescription_Id_Args *args) {
  XP_DESC_ARG("PJRT_DeviceDescription_Id", args,
              PJRT_DeviceDescription_Id_Args);
  args->id = d->index;
  return NULL;
}

static PJRT_Error *xp_desc_process_index(
    PJRT_DeviceDescription_ProcessIndex_Args *args) {
  XP_DESC_ARG("PJRT_DeviceDescription_ProcessIndex", args,
              PJRT_DeviceDescription_ProcessIndex_Args);
  args->process_index = 0;
  return NULL;
}

static PJRT_Error *xp_desc_attributes(
    PJRT_DeviceDescription_Attributes_Args *args) {
  XP_DESC_ARG("PJRT_DeviceDescription_Attributes", args,
              PJRT_DeviceDescription_Attributes_Args);
  args->attributes = d->attributes;
  args->num_attributes = d->num_attributes;
  return NULL;
}

static PJRT_Error *xp_desc_kind(PJRT_DeviceDescription_Kind_Args *args) {
  XP_DESC_ARG("PJRT_DeviceDescription_Kind", args,
              PJRT_DeviceDescription_Kind_Args);
  const char *kind = xrt_device_kind(d->xd);
  args->device_kind = kind ? kind : "sim";
  args->device_kind_size = strlen(args->device_kind);
  return NULL;
}

static PJRT_Error *xp_desc_debug_string(
    PJRT_DeviceDescription_DebugString_Args *args) {
  XP_DESC_ARG("PJRT_DeviceDescription_DebugString", args,
              PJRT_DeviceDescription_DebugString_Args);
  args->debug_string = d->debug_string;
  args->debug_string_size = strlen(d->debug_string);
  return NULL;
}

static PJRT_Error *xp_desc_to_string(
    PJRT_DeviceDescription_ToString_Args *args) {
  XP_DESC_ARG("PJRT_DeviceDescription_ToString", args,
              PJRT_DeviceDescription_ToString_Args);
  args->to_string = d->to_string;
  args->to_string_size = strlen(d->to_string);
  return NULL;
}

/* ---- devices ---- */

static PJRT_Error *xp_device_description(PJRT_Device_GetDescription_Args *args) {
  XP_DEVICE_ARG("PJRT_Device_GetDescription", args,
                PJRT_Device_GetDescription_Args);
  args->device_description = d->desc_handle;
  return NULL;
}

static PJRT_Error *xp_device_is_addressable(
    PJRT_Device_IsAddressable_Args *args) {
  XP_DEVICE_ARG("PJRT_Device_IsAddressable", args,
                PJRT_Device_IsAddressable_Args);
  (void)d;
  args->is_addressable = true; /* one process: every device */
  return NULL;
}

static PJRT_Error *xp_device_hardware_id(
    PJRT_Device_LocalHardwareId_Args *args) {
  XP_DEVICE_ARG("PJRT_Device_LocalHardwareId", args,
                PJRT_Device_LocalHardwareId_Args);
  args->local_hardware_id = d->index;
  return NULL;
}

static PJRT_Error *xp_device_memories(
    PJRT_Device_AddressableMemories_Args *args) {
  XP_DEVICE_ARG("PJRT_Device_AddressableMemories", args,
                PJRT_Device_AddressableMemories_Args);
  args->memories = &d->memory_handle;
  args->num_memories = 1;
  return NULL;
}

static PJRT_Error *xp_device_default_memory(
    PJRT_Device_DefaultMemory_Args *args) {
  XP_DEVICE_ARG("PJRT_Device_DefaultMemory", args,
                PJRT_Device_DefaultMemory_Args);
  args->memory = d->memory_handle;
  return NULL;
}

/* ---- memories ---- */

static PJRT_Error *xp_memory_id(PJRT_Memory_Id_Args *args) {
  XP_MEMORY_ARG("PJRT_Memory_Id", args, PJRT_Memory_Id_Args);
  args->id = d->index;
  return NULL;
}

static PJRT_Error *xp_memory_kind(PJRT_Memory_Kind_Args *args) {
  XP_MEMORY_ARG("PJRT_Memory_Kind", args, PJRT_Memory_Kind_Args);
  (void)d;
  args->kind = XP_MEMORY_KIND;
  args->kind_size = sizeof XP_MEMORY_KIND - 1;
  return NULL;
}

static PJRT_Error *xp_memory_kind_id(PJRT_Memory_Kind_Id_Args *args) {
  XP_MEMORY_ARG("PJRT_Memory_Kind_Id", args, PJRT_Memory_Kind_Id_Args);
  (void)d;
  args->kind_id = 0; /* the only kind */
  return NULL;
}

static PJRT_Error *xp_memory_debug_string(PJRT_Memory_DebugString_Args *args) {
  XP_MEMORY_ARG("PJRT_Memory_DebugString", args, PJRT_Memory_DebugString_Args);
  args->debug_string = d->mem_debug_string;
  args->debug_string_size = strlen(d->mem_debug_string);
  return NULL;
}

static PJRT_Error *xp_memory_to_string(PJRT_Memory_ToString_Args *args) {
  XP_MEMORY_ARG("PJRT_Memory_ToString", args, PJRT_Memory_ToString_Args);
  args->to_string = d->mem_to_string;
  args->to_string_size = strlen(d->mem_to_string);
  return NULL;
}

static PJRT_Error *xp_memory_devices(PJRT_Memory_AddressableByDevices_Args *args) {
  XP_MEMORY_ARG("PJRT_Memory_AddressableByDevices", args,
                PJRT_Memory_AddressableByDevices_Args);
  args->devices = &d->handle;
  args->num_devices = 1;
  return NULL;
}

XP_PRIVATE void xp_device_register(PJRT_Api *api) {
  api->PJRT_DeviceDescription_Id = xp_desc_id;
  api->PJRT_DeviceDescription_ProcessIndex = xp_desc_process_index;
  api->PJRT_DeviceDescription_Attributes = xp_desc_attributes;
  api->PJRT_DeviceDescription_Kind = xp_desc_kind;
  api->PJRT_DeviceDescription_DebugString = xp_desc_debug_string;
  api->PJRT_DeviceDescription_ToString = xp_desc_to_string;
  api->PJRT_Device_GetDescription = xp_device_description;
  api->PJRT_Device_IsAddressable = xp_device_is_addressable;
  api->PJRT_Device_LocalHardwareId = xp_device_hardware_id;
  api->PJRT_Device_AddressableMemories = xp_device_memories;
  api->PJRT_Device_DefaultMemory = xp_device_default_memory;
  api->PJRT_Memory_Id = xp_memory_id;
  api->PJRT_Memory_Kind = xp_memory_kind;
  api->PJRT_Memory_Kind_Id = xp_memory_kind_id;
  api->PJRT_Memory_DebugString = xp_memory_debug_string;
  api->PJRT_Memory_ToString = xp_memory_to_string;
  api->PJRT_Memory_AddressableByDevices = xp_memory_devices;
}
