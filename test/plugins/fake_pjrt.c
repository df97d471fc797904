/*
 * fake_pjrt.c - a tiny fake PJRT plugin (exports GetPjrtApi) for
 * test_pjrt_adapter.c: the PJRT functions xrt's adapter (src/pjrt) calls,
 * on host memory.  It "compiles" only programs whose text contains
 * stablehlo.add and runs them as an elementwise add of two f32 inputs on
 * every device of the launch.  It decodes the compile options the adapter
 * sends (replicas, partitions, device assignment, portability) and checks
 * them against what it executes.  Device ids are 100 + index, and a
 * loaded executable lists its devices in reverse logical order, so that
 * the adapter must map ids and argument lists, not assume them.
 *
 * FAKE_PJRT_MODE (read at each call) makes it misbehave:
 *   major         pjrt_api_version.major_version 1
 *   small         struct_size too small for the functions xrt calls
 *   tiny          struct_size too small to hold the version
 *   null_fns      PJRT_Client_Compile and PJRT_Buffer_ToHostBuffer NULL
 *   no_optional   every optional function NULL (attributes, descriptions,
 *                 CopyToDevice, NumOutputs, AddressableDevices ...)
 *   unimplemented the optional functions return UNIMPLEMENTED
 *   init_err      PJRT_Plugin_Initialize fails
 *   attrs_null    PJRT_Plugin_Attributes: 2 attributes, NULL array
 *   attrs_err     PJRT_Plugin_Attributes fails (INTERNAL)
 *   create_err    PJRT_Client_Create fails (RESOURCE_EXHAUSTED)
 *   create_null   PJRT_Client_Create: no error, NULL client
 *   devices_null  PJRT_Client_AddressableDevices: 3 devices, NULL array
 *   devices_huge  ... (size_t)-1 devices
 *   devices_zero  ... 0 devices
 *   device_nullentry  ... a NULL device in the array
 *   compile_null  PJRT_Client_Compile: no error, NULL executable
 *   num_outputs   PJRT_Executable_NumOutputs says 5
 *   execute_err   PJRT_LoadedExecutable_Execute fails (INTERNAL)
 *   outputs_null  ... succeeds without outputs
 *   event_err     ... its device_complete_events fail (DATA_LOSS)
 *   bad_code      errors carry code 99
 *   tohost_size   PJRT_Buffer_ToHostBuffer reports 3 bytes too many
 *   tohost_query_err  ... fails when asked only for the size (dst NULL)
 *   upload_null   PJRT_Client_BufferFromHostBuffer: no error, NULL buffer
 *   upload_event_err  ... its done_with_host_buffer event fails (DATA_LOSS)
 *   copy_null     PJRT_Buffer_CopyToDevice: no error, NULL buffer
 *   ready_err     PJRT_Buffer_ReadyEvent fails (INTERNAL)
 *   ready_event_err   ... its event fails (DATA_LOSS)
 *   loaded_devices_short  PJRT_LoadedExecutable_AddressableDevices: one
 *                 device fewer than the launch has
 *   loaded_devices_null   ... the right count, a NULL array
 *   loaded_devices_twice  ... the first device listed twice
 *   loaded_devices_foreign  ... a device of no client as the second
 *   getcode_err   PJRT_Error_GetCode fails (on every error)
 *   msg_null      PJRT_Error_Message gives a NULL message (with a size)
 *   attr_bad_name, attr_bad_string, attr_bad_list, attr_long_name,
 *   attr_long_value  PJRT_Plugin_Attributes: one attribute malformed
 *   attrs_many    ... 65537 attributes
 *   attr_new_type ... one attribute of a type newer than xrt knows
 *   desc_err, id_err, kind_err, dattrs_err  PJRT_Device_GetDescription,
 *                 PJRT_DeviceDescription_Id, _Kind, _Attributes fail
 *                 (INTERNAL)
 *   kind_empty    PJRT_DeviceDescription_Kind gives an empty kind
 *   destroy_err   PJRT_Buffer_Destroy frees the buffer but returns an
 *                 error (INTERNAL)
 *   query_event   PJRT_Buffer_ToHostBuffer gives an event for a size query
 *   getexe_err    PJRT_LoadedExecutable_GetExecutable fails (INTERNAL)
 *   getexe_null   ... gives no executable (and no error)
 *   numout_err    PJRT_Executable_NumOutputs fails (INTERNAL)
 *   loaded_devices_err  PJRT_LoadedExecutable_AddressableDevices fails
 *   shlo_neg, shlo_huge, shlo_mid  the StableHLO version attributes out
 *                 of range or of the wrong type or size
 * A program containing "fake_compile_error" fails to compile
 * (INVALID_ARGUMENT, "fake: cannot compile this").
 */
#include "src/pjrt/pjrt_abi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#define FAKE_EXPORT __declspec(dllexport)
#else
#define FAKE_EXPORT __attribute__((visibility("default")))
#endif

static int mode(const char *m) {
  const char *e = getenv("FAKE_PJRT_MODE");
  return e && !strcmp(e, m);
}

/* ---- errors and events ---- */

struct PJRT_Error {
  PJRT_Error_Code code;
  char msg[256];
};

static PJRT_Error *fail(PJRT_Error_Code code, const char *fmt, ...) {
  PJRT_Error *e = calloc(1, sizeof *e);
  if (!e) abort();
  e->code = mode("bad_code") ? (PJRT_Error_Code)99 : code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return e;
}

static PJRT_Error *unimpl(const char *fn) {
  return fail(PJRT_Error_Code_UNIMPLEMENTED, "fake: %s is not implemented",
              fn);
}

static void error_destroy(PJRT_Error_Destroy_Args *a) { free(a->error); }
static void error_message(PJRT_Error_Message_Args *a) {
  a->message = mode("msg_null") ? NULL : a->error->msg;
  a->message_size = strlen(a->error->msg);
}
static PJRT_Error *error_getcode(PJRT_Error_GetCode_Args *a) {
  if (mode("getcode_err"))
    return fail(PJRT_Error_Code_INTERNAL, "fake: no code for you");
  a->code = a->error->code;
  return NULL;
}

/* Events are ready when made; they may carry a failure. */
struct PJRT_Event {
  PJRT_Error_Code code; /* 0: success */
  char msg[256];
};

static PJRT_Event *event_new(PJRT_Error_Code code, const char *msg) {
  PJRT_Event *e = calloc(1, sizeof *e);
  if (!e) abort();
  e->code = code;
  snprintf(e->msg, sizeof e->msg, "%s", msg);
  return e;
}
static PJRT_Error *event_destroy(PJRT_Event_Destroy_Args *a) {
  free(a->event);
  return NULL;
}
static PJRT_Error *event_await(PJRT_Event_Await_Args *a) {
  return a->event->code ? fail(a->event->code, "%s", a->event->msg) : NULL;
}

/* ---- plugin ---- */

static PJRT_Error *plugin_initialize(PJRT_Plugin_Initialize_Args *a) {
  (void)a;
  if (mode("unimplemented")) return unimpl("PJRT_Plugin_Initialize");
  if (mode("init_err"))
    return fail(PJRT_Error_Code_FAILED_PRECONDITION, "fake: no hardware");
  return NULL;
}

static const int64_t shlo_min[3] = {0, 9, 0}, shlo_max[3] = {1, 99, 0};
static const int64_t list3[3] = {1, -2, 3};
#define NV(n) .struct_size = PJRT_NamedValue_STRUCT_SIZE, .name = n, \
              .name_size = sizeof n - 1
static const PJRT_NamedValue plugin_attrs[] = {
    {NV("stablehlo_minimum_version"), .type = PJRT_NamedValue_kInt64List,
     .int64_array_value = shlo_min, .value_size = 3},
    {NV("stablehlo_current_version"), .type = PJRT_NamedValue_kInt64List,
     .int64_array_value = shlo_max, .value_size = 3},
    {NV("fake_string"), .type = PJRT_NamedValue_kString,
     .string_value = "hello", .value_size = 5},
    {NV("fake_int"), .type = PJRT_NamedValue_kInt64, .int64_value = -7,
     .value_size = 1},
    {NV("fake_float"), .type = PJRT_NamedValue_kFloat, .float_value = 0.5f,
     .value_size = 1},
    {NV("fake_bool"), .type = PJRT_NamedValue_kBool, .bool_value = true,
     .value_size = 1},
    {NV("fake_list"), .type = PJRT_NamedValue_kInt64List,
     .int64_array_value = list3, .value_size = 3},
};

/* One malformed (or newer) attribute after a good one, per mode. */
static PJRT_NamedValue odd_attrs[2];

static PJRT_Error *plugin_attributes(PJRT_Plugin_Attributes_Args *a) {
  if (mode("unimplemented")) return unimpl("PJRT_Plugin_Attributes");
  if (mode("attrs_err"))
    return fail(PJRT_Error_Code_INTERNAL, "fake: no attributes today");
  a->attributes = mode("attrs_null") ? NULL : plugin_attrs;
  a->num_attributes = mode("attrs_null")
                          ? 2
                          : sizeof plugin_attrs / sizeof plugin_attrs[0];
  if (mode("attrs_many")) a->num_attributes = 65537;
  static const char *const odd[] = {"attr_bad_name", "attr_bad_string",
                                    "attr_bad_list", "attr_long_name",
                                    "attr_long_value", "attr_new_type"};
  for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) {
    if (!mode(odd[k])) continue;
    odd_attrs[0] = plugin_attrs[2];
    PJRT_NamedValue *v = &odd_attrs[1];
    *v = plugin_attrs[3]; /* fake_int */
    switch (k) {
    case 0: v->name = NULL; break;
    case 1:
      v->type = PJRT_NamedValue_kString;
      v->string_value = NULL;
      v->value_size = 2;
      break;
    case 2:
      v->type = PJRT_NamedValue_kInt64List;
      v->int64_array_value = NULL;
      v->value_size = 2;
      break;
    case 3: v->name_size = 4097; break;
    case 4:
      v->type = PJRT_NamedValue_kString;
      v->value_size = 65537;
      break;
    case 5: v->type = (PJRT_NamedValue_Type)42; break;
    }
    a->attributes = odd_attrs;
    a->num_attributes = 2;
  }
  /* The version attributes, unusable: minimum {-1, 9, 0} and current an
   * int64; {1000000, 0, 0} and a list of 2; {0, -1, 0} and {0, 0, 1000000}. */
  static PJRT_NamedValue vers[sizeof plugin_attrs / sizeof plugin_attrs[0]];
  static int64_t vmin[3], vcur[3];
  static const int64_t tables[3][6] = {{-1, 9, 0, 1, 99, 0},
                                       {1000000, 0, 0, 1, 99, 0},
                                       {0, -1, 0, 0, 0, 1000000}};
  static const char *const vmodes[] = {"shlo_neg", "shlo_huge", "shlo_mid"};
  for (int k = 0; k < 3; k++) {
    if (!mode(vmodes[k])) continue;
    memcpy(vers, plugin_attrs, sizeof vers);
    memcpy(vmin, tables[k], sizeof vmin);
    memcpy(vcur, tables[k] + 3, sizeof vcur);
    vers[0].int64_array_value = vmin;
    vers[1].int64_array_value = vcur;
    if (k == 0) vers[1].type = PJRT_NamedValue_kInt64;
    if (k == 1) vers[1].value_size = 2;
    a->attributes = vers;
  }
  return NULL;
}

/* ---- clients and devices ---- */

typedef struct fake_device {
  int index;
  PJRT_NamedValue attr;
} fake_device;

struct PJRT_Client {
  int n;
  fake_device *devs;
  PJRT_Device **list;
};

static fake_device *dev_of(const void *d) { return (fake_device *)(void *)d; }

static PJRT_Error *client_create(PJRT_Client_Create_Args *a) {
  if (mode("create_err"))
    return fail(PJRT_Error_Code_RESOURCE_EXHAUSTED, "fake: no devices today");
  if (mode("create_null")) return NULL;
  int n = 1;
  for (size_t i = 0; i < a->num_options; i++) {
    const PJRT_NamedValue *v = &a->create_options[i];
    if (v->name_size == 11 && !memcmp(v->name, "num_devices", 11)) {
      if (v->type != PJRT_NamedValue_kInt64 || v->int64_value < 1 ||
          v->int64_value > 64)
        return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: num_devices");
      n = (int)v->int64_value;
    }
  }
  PJRT_Client *c = calloc(1, sizeof *c);
  c->n = n;
  c->devs = calloc((size_t)n, sizeof *c->devs);
  c->list = calloc((size_t)n, sizeof *c->list);
  for (int i = 0; i < n; i++) {
    fake_device *d = &c->devs[i];
    d->index = i;
    d->attr = (PJRT_NamedValue){NV("core"), .type = PJRT_NamedValue_kInt64,
                                .int64_value = i, .value_size = 1};
    c->list[i] = (PJRT_Device *)(void *)d;
  }
  a->client = c;
  return NULL;
}

static PJRT_Error *client_destroy(PJRT_Client_Destroy_Args *a) {
  free(a->client->devs);
  free(a->client->list);
  free(a->client);
  return NULL;
}

static PJRT_Error *addressable_devices(PJRT_Client_AddressableDevices_Args *a) {
  a->addressable_devices = a->client->list;
  a->num_addressable_devices = (size_t)a->client->n;
  if (mode("devices_null")) {
    a->addressable_devices = NULL;
    a->num_addressable_devices = 3;
  }
  if (mode("devices_huge")) a->num_addressable_devices = (size_t)-1;
  if (mode("devices_zero")) a->num_addressable_devices = 0;
  if (mode("device_nullentry") && a->client->n > 1)
    a->client->list[a->client->n - 1] = NULL;
  return NULL;
}

static PJRT_Error *get_description(PJRT_Device_GetDescription_Args *a) {
  if (mode("unimplemented")) return unimpl("PJRT_Device_GetDescription");
  if (mode("desc_err")) return fail(PJRT_Error_Code_INTERNAL, "fake: no desc");
  a->device_description = (PJRT_DeviceDescription *)(void *)a->device;
  return NULL;
}
static PJRT_Error *description_id(PJRT_DeviceDescription_Id_Args *a) {
  if (mode("id_err")) return fail(PJRT_Error_Code_INTERNAL, "fake: no id");
  a->id = 100 + dev_of(a->device_description)->index;
  return NULL;
}
static PJRT_Error *description_kind(PJRT_DeviceDescription_Kind_Args *a) {
  if (mode("kind_err")) return fail(PJRT_Error_Code_INTERNAL, "fake: no kind");
  a->device_kind = "fake_pjrt_device";
  a->device_kind_size = mode("kind_empty") ? 0 : strlen(a->device_kind);
  return NULL;
}
static PJRT_Error *description_attributes(
    PJRT_DeviceDescription_Attributes_Args *a) {
  if (mode("dattrs_err"))
    return fail(PJRT_Error_Code_INTERNAL, "fake: no attributes");
  a->attributes = &dev_of(a->device_description)->attr;
  a->num_attributes = 1;
  return NULL;
}

/* ---- buffers ---- */

struct PJRT_Buffer {
  PJRT_Buffer_Type type;
  size_t rank;
  int64_t dims[16];
  size_t bytes;
  int device;
  unsigned char *data;
};

static size_t elem_bytes(PJRT_Buffer_Type t) {
  switch (t) {
  case PJRT_Buffer_Type_S16: case PJRT_Buffer_Type_U16:
  case PJRT_Buffer_Type_F16: case PJRT_Buffer_Type_BF16: return 2;
  case PJRT_Buffer_Type_S32: case PJRT_Buffer_Type_U32:
  case PJRT_Buffer_Type_F32: return 4;
  case PJRT_Buffer_Type_S64: case PJRT_Buffer_Type_U64:
  case PJRT_Buffer_Type_F64: case PJRT_Buffer_Type_C64: return 8;
  case PJRT_Buffer_Type_C128: return 16;
  default: return 1;
  }
}

static PJRT_Buffer *buffer_new(PJRT_Buffer_Type t, size_t rank,
                               const int64_t *dims, int device) {
  PJRT_Buffer *b = calloc(1, sizeof *b);
  b->type = t;
  b->rank = rank;
  b->bytes = elem_bytes(t);
  for (size_t i = 0; i < rank; i++) {
    b->dims[i] = dims[i];
    b->bytes *= (size_t)dims[i];
  }
  b->device = device;
  b->data = calloc(1, b->bytes ? b->bytes : 1);
  return b;
}

static PJRT_Error *from_host(PJRT_Client_BufferFromHostBuffer_Args *a) {
  if (a->num_dims > 16 || !a->device)
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: bad upload");
  PJRT_Buffer *b = buffer_new(a->type, a->num_dims, a->dims,
                              dev_of(a->device)->index);
  if (b->bytes) memcpy(b->data, a->data, b->bytes);
  a->buffer = b;
  a->done_with_host_buffer = event_new(0, "");
  if (mode("upload_null")) {
    free(b->data);
    free(b);
    a->buffer = NULL;
  }
  if (mode("upload_event_err")) {
    a->done_with_host_buffer->code = PJRT_Error_Code_DATA_LOSS;
    snprintf(a->done_with_host_buffer->msg,
             sizeof a->done_with_host_buffer->msg, "fake: upload lost");
  }
  return NULL;
}

static PJRT_Error *buffer_destroy(PJRT_Buffer_Destroy_Args *a) {
  free(a->buffer->data);
  free(a->buffer);
  if (mode("destroy_err"))
    return fail(PJRT_Error_Code_INTERNAL, "fake: destroyed, grudgingly");
  return NULL;
}

static PJRT_Error *to_host(PJRT_Buffer_ToHostBuffer_Args *a) {
  size_t have = a->src->bytes + (mode("tohost_size") ? 3 : 0);
  if (!a->dst && mode("tohost_query_err"))
    return fail(PJRT_Error_Code_INTERNAL, "fake: sizes are secret");
  if (!a->dst) {
    a->dst_size = have;
    if (mode("query_event")) a->event = event_new(0, "");
    return NULL;
  }
  if (a->dst_size < a->src->bytes)
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: dst_size %zu < %zu",
                a->dst_size, a->src->bytes);
  if (a->src->bytes) memcpy(a->dst, a->src->data, a->src->bytes);
  a->event = event_new(0, "");
  return NULL;
}

static PJRT_Error *copy_to_device(PJRT_Buffer_CopyToDevice_Args *a) {
  if (mode("unimplemented")) return unimpl("PJRT_Buffer_CopyToDevice");
  PJRT_Buffer *s = a->buffer;
  PJRT_Buffer *b = buffer_new(s->type, s->rank, s->dims,
                              dev_of(a->dst_device)->index);
  if (b->bytes) memcpy(b->data, s->data, b->bytes);
  a->dst_buffer = b;
  if (mode("copy_null")) {
    free(b->data);
    free(b);
    a->dst_buffer = NULL;
  }
  return NULL;
}

static PJRT_Error *ready_event(PJRT_Buffer_ReadyEvent_Args *a) {
  if (mode("ready_err")) return fail(PJRT_Error_Code_INTERNAL, "fake: unsure");
  a->event = event_new(mode("ready_event_err") ? PJRT_Error_Code_DATA_LOSS : 0,
                       "fake: the copy was lost");
  return NULL;
}

/* ---- compile options: a minimal protobuf reader ---- */

typedef struct fake_opts {
  long long replicas, partitions, portable;
  int ids[64];
  int num_ids, computations;
} fake_opts;

static int rd_varint(const unsigned char **p, const unsigned char *end,
                     unsigned long long *v) {
  *v = 0;
  for (int s = 0; s < 64 && *p < end; s += 7) {
    unsigned char b = *(*p)++;
    *v |= (unsigned long long)(b & 0x7f) << s;
    if (!(b & 0x80)) return 1;
  }
  return 0;
}

/* Walks the fields of [p, end); calls f for each (value or bytes). */
typedef int (*field_fn)(fake_opts *o, unsigned field, unsigned long long v,
                        const unsigned char *b, size_t n);

static int walk(fake_opts *o, const unsigned char *p, const unsigned char *end,
                field_fn f) {
  while (p < end) {
    unsigned long long key, v;
    if (!rd_varint(&p, end, &key)) return 0;
    unsigned wire = (unsigned)(key & 7), field = (unsigned)(key >> 3);
    if (wire == 0) {
      if (!rd_varint(&p, end, &v) || !f(o, field, v, NULL, 0)) return 0;
    } else if (wire == 2) {
      if (!rd_varint(&p, end, &v) || v > (unsigned long long)(end - p) ||
          !f(o, field, 0, p, (size_t)v))
        return 0;
      p += v;
    } else {
      return 0; /* the adapter writes no other wire types */
    }
  }
  return 1;
}

static int on_devices(fake_opts *o, unsigned field, unsigned long long v,
                      const unsigned char *b, size_t n) {
  (void)v;
  if (field != 1 || !b) return 0; /* packed replica_device_ids */
  const unsigned char *end = b + n;
  while (b < end) {
    unsigned long long id;
    if (!rd_varint(&b, end, &id) || o->num_ids >= 64) return 0;
    o->ids[o->num_ids++] = (int)id;
  }
  return 1;
}

static int on_assignment(fake_opts *o, unsigned field, unsigned long long v,
                         const unsigned char *b, size_t n) {
  (void)v;
  if (field == 3) {
    o->computations++;
    return walk(o, b, b + n, on_devices);
  }
  return field == 1 || field == 2;
}

static int on_build(fake_opts *o, unsigned field, unsigned long long v,
                    const unsigned char *b, size_t n) {
  if (field == 4) o->replicas = (long long)v;
  else if (field == 5) o->partitions = (long long)v;
  else if (field == 9) return walk(o, b, b + n, on_assignment);
  return 1;
}

static int on_options(fake_opts *o, unsigned field, unsigned long long v,
                      const unsigned char *b, size_t n) {
  if (field == 3) return b && walk(o, b, b + n, on_build);
  if (field == 4) o->portable = (long long)v;
  return 1;
}

/* ---- executables ---- */

struct PJRT_LoadedExecutable {
  int num_parts, portable;
  PJRT_Device *devices[64]; /* reverse logical order */
};
/* A PJRT_Executable is its loaded executable, plus one bit of tag. */
struct PJRT_Executable {
  PJRT_LoadedExecutable *le;
};

static PJRT_Error *compile(PJRT_Client_Compile_Args *a) {
  const PJRT_Program *p = a->program;
  if (p->format_size != 4 || memcmp(p->format, "mlir", 4))
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: format");
  char *text = calloc(1, p->code_size + 1);
  memcpy(text, p->code, p->code_size);
  int add = strstr(text, "stablehlo.add") != NULL;
  int bad = strstr(text, "fake_compile_error") != NULL;
  free(text);
  if (bad || !add)
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: cannot compile this");
  fake_opts o;
  memset(&o, 0, sizeof o);
  if (!walk(&o, (const unsigned char *)a->compile_options,
            (const unsigned char *)a->compile_options +
                a->compile_options_size, on_options))
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: compile options");
  long long parts = o.replicas * o.partitions;
  if (parts < 1 || parts > 64 || parts > a->client->n ||
      (o.portable ? parts != 1 || o.num_ids
                  : o.num_ids != parts || o.computations != o.partitions))
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: %lld x %lld with "
                "%d device ids (portable %lld)", o.replicas, o.partitions,
                o.num_ids, o.portable);
  if (mode("compile_null")) return NULL;
  PJRT_LoadedExecutable *e = calloc(1, sizeof *e);
  e->num_parts = (int)parts;
  e->portable = (int)o.portable;
  /* ids[c * replicas + r] is logical id r * partitions + c. */
  for (int r = 0; r < o.replicas; r++)
    for (int c = 0; c < o.partitions; c++) {
      int id = o.ids[c * o.replicas + r] - 100;
      int lid = r * (int)o.partitions + c;
      if (!o.portable && (id < 0 || id >= a->client->n)) {
        free(e);
        return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: device id %d",
                    id + 100);
      }
      if (!o.portable)
        e->devices[e->num_parts - 1 - lid] = a->client->list[id];
    }
  a->executable = e;
  return NULL;
}

static PJRT_Error *loaded_destroy(PJRT_LoadedExecutable_Destroy_Args *a) {
  free(a->executable);
  return NULL;
}
static PJRT_Error *get_executable(PJRT_LoadedExecutable_GetExecutable_Args *a) {
  if (mode("getexe_err"))
    return fail(PJRT_Error_Code_INTERNAL, "fake: no executable");
  if (mode("getexe_null")) {
    a->executable = NULL;
    return NULL;
  }
  PJRT_Executable *x = calloc(1, sizeof *x);
  x->le = a->loaded_executable;
  a->executable = x;
  return NULL;
}
static PJRT_Error *executable_destroy(PJRT_Executable_Destroy_Args *a) {
  free(a->executable);
  return NULL;
}
static PJRT_Error *num_outputs(PJRT_Executable_NumOutputs_Args *a) {
  if (mode("unimplemented")) return unimpl("PJRT_Executable_NumOutputs");
  if (mode("numout_err"))
    return fail(PJRT_Error_Code_INTERNAL, "fake: cannot count");
  a->num_outputs = mode("num_outputs") ? 5 : 1;
  return NULL;
}
static PJRT_Error *loaded_devices(
    PJRT_LoadedExecutable_AddressableDevices_Args *a) {
  if (mode("loaded_devices_err"))
    return fail(PJRT_Error_Code_INTERNAL, "fake: devices unknown");
  a->addressable_devices = a->executable->devices;
  a->num_addressable_devices =
      a->executable->portable ? 0 : (size_t)a->executable->num_parts;
  if (a->executable->portable) return NULL;
  if (mode("loaded_devices_short")) a->num_addressable_devices--;
  if (mode("loaded_devices_null")) a->addressable_devices = NULL;
  if ((mode("loaded_devices_twice") || mode("loaded_devices_foreign")) &&
      a->num_addressable_devices > 1) {
    static PJRT_Device *twice[64];
    static fake_device stranger;
    for (size_t i = 0; i < a->num_addressable_devices && i < 64; i++)
      twice[i] = a->executable->devices[i];
    twice[1] = mode("loaded_devices_twice")
                   ? twice[0]
                   : (PJRT_Device *)(void *)&stranger;
    a->addressable_devices = twice;
  }
  return NULL;
}

/* Adds list k's two f32 inputs into its one output. */
static PJRT_Error *run_one(PJRT_Buffer *const *in, PJRT_Buffer **out,
                           int device) {
  PJRT_Buffer *x = in[0], *y = in[1];
  if (x->type != PJRT_Buffer_Type_F32 || y->type != PJRT_Buffer_Type_F32 ||
      x->bytes != y->bytes)
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: add takes two f32 "
                "arrays of one shape");
  if (x->device != device || y->device != device)
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: an argument on "
                "device %d, not %d", x->device, device);
  PJRT_Buffer *r = buffer_new(x->type, x->rank, x->dims, device);
  const float *a = (const float *)(void *)x->data;
  const float *b = (const float *)(void *)y->data;
  float *c = (float *)(void *)r->data;
  for (size_t i = 0; i < x->bytes / 4; i++) c[i] = a[i] + b[i];
  out[0] = r;
  return NULL;
}

static PJRT_Error *execute(PJRT_LoadedExecutable_Execute_Args *a) {
  PJRT_LoadedExecutable *e = a->executable;
  if (mode("execute_err"))
    return fail(PJRT_Error_Code_INTERNAL, "fake: device on fire");
  if (!a->options || a->num_args != 2)
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: bad execute");
  if (e->portable != (a->execute_device != NULL) ||
      (size_t)(e->portable ? 1 : e->num_parts) != a->num_devices)
    return fail(PJRT_Error_Code_INVALID_ARGUMENT, "fake: %zu devices, "
                "execute_device %p, portable %d", a->num_devices,
                (void *)a->execute_device, e->portable);
  if (mode("outputs_null")) return NULL;
  for (size_t k = 0; k < a->num_devices; k++) {
    int dev = dev_of(e->portable ? a->execute_device : e->devices[k])->index;
    PJRT_Error *err = run_one(a->argument_lists[k], a->output_lists[k], dev);
    if (err) {
      for (size_t j = 0; j < k; j++) {
        PJRT_Buffer_Destroy_Args d = {.buffer = a->output_lists[j][0]};
        buffer_destroy(&d);
      }
      return err;
    }
  }
  for (size_t k = 0; a->device_complete_events && k < a->num_devices; k++)
    a->device_complete_events[k] =
        mode("event_err") ? event_new(PJRT_Error_Code_DATA_LOSS,
                                      "fake: lost the results")
                          : event_new(0, "");
  return NULL;
}

/* ---- the table ---- */

static PJRT_Api api;

FAKE_EXPORT const PJRT_Api *GetPjrtApi(void) {
  memset(&api, 0, sizeof api);
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.major_version = mode("major") ? 1 : PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
  api.PJRT_Error_Destroy = error_destroy;
  api.PJRT_Error_Message = error_message;
  api.PJRT_Error_GetCode = error_getcode;
  api.PJRT_Event_Destroy = event_destroy;
  api.PJRT_Event_Await = event_await;
  api.PJRT_Client_Create = client_create;
  api.PJRT_Client_Destroy = client_destroy;
  api.PJRT_Client_AddressableDevices = addressable_devices;
  api.PJRT_Client_Compile = compile;
  api.PJRT_Client_BufferFromHostBuffer = from_host;
  api.PJRT_LoadedExecutable_Destroy = loaded_destroy;
  api.PJRT_LoadedExecutable_Execute = execute;
  api.PJRT_Buffer_Destroy = buffer_destroy;
  api.PJRT_Buffer_ToHostBuffer = to_host;
  if (!mode("no_optional")) {
    api.PJRT_Plugin_Initialize = plugin_initialize;
    api.PJRT_Plugin_Attributes = plugin_attributes;
    api.PJRT_Device_GetDescription = get_description;
    api.PJRT_DeviceDescription_Id = description_id;
    api.PJRT_DeviceDescription_Kind = description_kind;
    api.PJRT_DeviceDescription_Attributes = description_attributes;
    api.PJRT_Buffer_CopyToDevice = copy_to_device;
    api.PJRT_Buffer_ReadyEvent = ready_event;
    api.PJRT_LoadedExecutable_GetExecutable = get_executable;
    api.PJRT_Executable_Destroy = executable_destroy;
    api.PJRT_Executable_NumOutputs = num_outputs;
    api.PJRT_LoadedExecutable_AddressableDevices = loaded_devices;
  }
  if (mode("null_fns")) {
    api.PJRT_Client_Compile = NULL;
    api.PJRT_Buffer_ToHostBuffer = NULL;
  }
  if (mode("small"))
    api.struct_size = offsetof(PJRT_Api, PJRT_Client_Create);
  if (mode("tiny")) api.struct_size = sizeof(size_t);
  return &api;
}
