/*
 * src/pjrt/client.c - clients: PJRT_Client_Create with create options
 * from xrt's client arguments, and the client's addressable devices as
 * xrt devices (kind, attributes, ids for device assignments).
 */
#include "xrt.h"
#include "internal.h"

/* Named values of the create options xrt's arguments carry ("num_devices"
 * and "memory_per_device", as libxrt_pjrt.so names them; other plugins
 * ignore names they do not know). */
static size_t xpj_create_options(const xrt_plugin_client_args *a,
                                 PJRT_NamedValue *v) {
  size_t n = 0;
  if (a->num_devices > 0) {
    memset(&v[n], 0, sizeof v[n]);
    v[n].struct_size = PJRT_NamedValue_STRUCT_SIZE;
    v[n].name = "num_devices";
    v[n].name_size = strlen(v[n].name);
    v[n].type = PJRT_NamedValue_kInt64;
    v[n].int64_value = a->num_devices;
    v[n].value_size = 1;
    n++;
  }
  if (a->device_memory_bytes > 0 && a->device_memory_bytes <= INT64_MAX) {
    memset(&v[n], 0, sizeof v[n]);
    v[n].struct_size = PJRT_NamedValue_STRUCT_SIZE;
    v[n].name = "memory_per_device";
    v[n].name_size = strlen(v[n].name);
    v[n].type = PJRT_NamedValue_kInt64;
    v[n].int64_value = (int64_t)a->device_memory_bytes;
    v[n].value_size = 1;
    n++;
  }
  return n;
}

/* The description of a device, or NULL (the plugin cannot say). */
static xrt_status xpj_description(xpj_client *c, PJRT_Device *dev,
                                  PJRT_DeviceDescription **out,
                                  xrt_plugin_error *err) {
  const xpj_plugin *p = c->p;
  *out = NULL;
  if (!p->fn.PJRT_Device_GetDescription) return XRT_OK;
  PJRT_Device_GetDescription_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE;
  a.device = dev;
  PJRT_Error *e = p->fn.PJRT_Device_GetDescription(&a);
  if (e && xpj_unimplemented(p, e)) return XRT_OK;
  if (e) return xpj_error(p, e, "PJRT_Device_GetDescription", err);
  *out = a.device_description;
  return XRT_OK;
}

static xrt_status xpj_device_id(xpj_client *c, PJRT_DeviceDescription *d,
                                int *id, xrt_plugin_error *err) {
  const xpj_plugin *p = c->p;
  if (!d || !p->fn.PJRT_DeviceDescription_Id) return XRT_OK;
  PJRT_DeviceDescription_Id_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_DeviceDescription_Id_Args_STRUCT_SIZE;
  a.device_description = d;
  PJRT_Error *e = p->fn.PJRT_DeviceDescription_Id(&a);
  if (e && xpj_unimplemented(p, e)) return XRT_OK;
  if (e) return xpj_error(p, e, "PJRT_DeviceDescription_Id", err);
  *id = a.id;
  return XRT_OK;
}

static xrt_status xpj_device_kind(xpj_client *c, PJRT_DeviceDescription *d,
                                  xpj_device *out, xrt_plugin_error *err) {
  const xpj_plugin *p = c->p;
  const char *kind = "pjrt";
  size_t n = 4;
  if (d && p->fn.PJRT_DeviceDescription_Kind) {
    PJRT_DeviceDescription_Kind_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE;
    a.device_description = d;
    PJRT_Error *e = p->fn.PJRT_DeviceDescription_Kind(&a);
    if (e && !xpj_unimplemented(p, e))
      return xpj_error(p, e, "PJRT_DeviceDescription_Kind", err);
    if (!e && a.device_kind && a.device_kind_size && a.device_kind_size < 4096) {
      kind = a.device_kind;
      n = a.device_kind_size;
    }
  }
  out->kind = (char *)xpj_alloc(c->al, n + 1);
  if (!out->kind)
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of "
                    "memory for a device kind", p->name);
  memcpy(out->kind, kind, n);
  return XRT_OK;
}

static xrt_status xpj_device_attrs(xpj_client *c, PJRT_DeviceDescription *d,
                                   xpj_device *out, xrt_plugin_error *err) {
  const xpj_plugin *p = c->p;
  if (!d || !p->fn.PJRT_DeviceDescription_Attributes) return XRT_OK;
  PJRT_DeviceDescription_Attributes_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_DeviceDescription_Attributes_Args_STRUCT_SIZE;
  a.device_description = d;
  PJRT_Error *e = p->fn.PJRT_DeviceDescription_Attributes(&a);
  if (e && xpj_unimplemented(p, e)) return XRT_OK;
  if (e) return xpj_error(p, e, "PJRT_DeviceDescription_Attributes", err);
  return xpj_attrs_copy(p, "PJRT_DeviceDescription_Attributes", a.attributes,
                        a.num_attributes, &out->attrs, err);
}

static xrt_status xpj_device_init(xpj_client *c, int i, PJRT_Device *dev,
                                  xrt_plugin_error *err) {
  xpj_device *d = &c->devs[i];
  d->dev = dev;
  d->id = i;
  PJRT_DeviceDescription *desc = NULL;
  xrt_status s = xpj_description(c, dev, &desc, err);
  if (!s) s = xpj_device_id(c, desc, &d->id, err);
  if (!s) s = xpj_device_kind(c, desc, d, err);
  if (!s) s = xpj_device_attrs(c, desc, d, err);
  return s;
}

/* The client's addressable devices, checked: a count in range, an array,
 * no NULL device. */
static xrt_status xpj_devices(xpj_client *c, xrt_plugin_error *err) {
  const xpj_plugin *p = c->p;
  PJRT_Client_AddressableDevices_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
  a.client = c->pc;
  xrt_status s = xpj_error(p, p->fn.PJRT_Client_AddressableDevices(&a),
                           "PJRT_Client_AddressableDevices", err);
  if (s) return s;
  const char *fn = "PJRT_Client_AddressableDevices";
  if (a.num_addressable_devices == 0 ||
      a.num_addressable_devices > XPJ_MAX_DEVICES)
    return xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned %zu "
                    "devices (xrt takes 1..%d)", p->name, fn,
                    a.num_addressable_devices, XPJ_MAX_DEVICES);
  if (!a.addressable_devices)
    return xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned %zu "
                    "devices but a NULL array", p->name, fn,
                    a.num_addressable_devices);
  c->n = (int)a.num_addressable_devices;
  c->devs = (xpj_device *)xpj_alloc(c->al, (size_t)c->n * sizeof *c->devs);
  if (!c->devs)
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of "
                    "memory for %d devices", p->name, c->n);
  for (int i = 0; i < c->n; i++) {
    if (!a.addressable_devices[i])
      return xpj_fail(err, XRT_INTERNAL, "plugin '%s': %s returned a NULL "
                      "device at index %d", p->name, fn, i);
    if ((s = xpj_device_init(c, i, a.addressable_devices[i], err))) return s;
  }
  return XRT_OK;
}

static void xpj_client_destroy(void *client) {
  xpj_client *c = (xpj_client *)client;
  if (!c) return;
  const xpj_plugin *p = c->p;
  for (int i = 0; c->devs && i < c->n; i++) {
    xpj_free(c->al, c->devs[i].kind);
    xpj_attrs_free(&c->devs[i].attrs);
  }
  xpj_free(c->al, c->devs);
  /* Every record (on the free list, in a thread's spare slot, or, when
   * the core has not freed it, in use). */
  while (c->all_mems) {
    xpj_mem *m = c->all_mems;
    c->all_mems = m->next_all;
    xpj_buffer_destroy(p, m->buf); /* NULL: nothing */
    xpj_free(c->al, m->host);
    xpj_free(c->al, m);
  }
  c->free_mems = NULL;
  if (c->pc) {
    PJRT_Client_Destroy_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = PJRT_Client_Destroy_Args_STRUCT_SIZE;
    a.client = c->pc;
    xrt_plugin_error ignored;
    xpj_error(p, p->fn.PJRT_Client_Destroy(&a), "PJRT_Client_Destroy",
              &ignored);
  }
  xpj_free(c->al, c);
}

static xrt_status xpj_client_open(xpj_client *c,
                                  const xrt_plugin_client_args *args,
                                  xrt_plugin_error *err) {
  const xpj_plugin *p = c->p;
  PJRT_NamedValue opts[2];
  PJRT_Client_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  a.create_options = opts;
  a.num_options = xpj_create_options(args, opts);
  xrt_status s = xpj_error(p, p->fn.PJRT_Client_Create(&a),
                           "PJRT_Client_Create", err);
  if (s) return s;
  if (!a.client)
    return xpj_fail(err, XRT_INTERNAL, "plugin '%s': PJRT_Client_Create "
                    "returned no error and a NULL client", p->name);
  c->pc = a.client;
  return xpj_devices(c, err);
}

static xrt_status xpj_client_create(const xrt_plugin_client_args *args,
                                    void **out_client, xrt_plugin_error *err) {
  if (!args || !out_client || !XRT_STRUCT_HAS(args, xrt_plugin_client_args, api) ||
      !args->api)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "client_create: bad "
                    "arguments (a core older than ABI 1.3?)");
  const xpj_plugin *p = (const xpj_plugin *)args->api;
  xpj_client *c = (xpj_client *)xpj_alloc(args->allocator, sizeof *c);
  if (!c)
    return xpj_fail(err, XRT_RESOURCE_EXHAUSTED, "plugin '%s': out of "
                    "memory for a client", p->name);
  c->p = p;
  c->al = args->allocator;
  atomic_flag_clear(&c->free_lock);
  static _Atomic uint64_t serials;
  c->serial = atomic_fetch_add(&serials, 1) + 1; /* never 0 */
  xrt_status s = xpj_client_open(c, args, err);
  if (s) {
    xpj_client_destroy(c);
    return s;
  }
  *out_client = c;
  return XRT_OK;
}

static int xpj_device_count(void *client) {
  return client ? ((xpj_client *)client)->n : -1;
}

static xrt_status xpj_device_describe(void *client, int device,
                                      xrt_plugin_device_desc *out,
                                      xrt_plugin_error *err) {
  xpj_client *c = (xpj_client *)client;
  if (!c || !out || device < 0 || device >= c->n)
    return xpj_fail(err, XRT_INVALID_ARGUMENT, "device_describe: bad "
                    "arguments (device %d)", device);
  out->kind = c->devs[device].kind;
  out->num_attributes = c->devs[device].attrs.n;
  out->attributes = c->devs[device].attrs.a;
  return XRT_OK;
}

XPJ_PRIVATE void xpj_client_fill(xrt_plugin_api *t) {
  t->client_create = xpj_client_create;
  t->client_destroy = xpj_client_destroy;
  t->device_count = xpj_device_count;
  t->device_describe = xpj_device_describe;
}
