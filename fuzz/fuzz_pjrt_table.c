/* libFuzzer target: the PJRT adapter (src/pjrt, xrt_pjrt.c) against a
 * misbehaving PJRT plugin.  The input bytes pick a PJRT_Api table from a
 * menu: its version, its struct_size, and for each function a working
 * entry (the fake PJRT plugin of test/plugins/fake_pjrt.c, compiled in),
 * NULL, one that fails with a code the bytes choose (including codes that
 * are not PJRT's), or one that reports success with NULL outputs or
 * garbage counts.  The table is registered with xrt_context_register_pjrt;
 * when that succeeds, a client of one to three devices does a buffer
 * round trip, a device-to-device copy, a compile, an execution and a
 * replicated launch.  Error statuses are fine; crashes, leaks, hangs and
 * UBSan reports are findings.  Misbehaviours no caller can survive (bogus
 * pointers, counts larger than the arrays they come with, destroy
 * functions that do not free) are not on the menu. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xrt.h"
#include "../test/plugins/fake_pjrt.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fuzz_bytes {
  const uint8_t *p;
  size_t n;
} fuzz_bytes;

/* One choice among n (0, the working entry, once the bytes are spent). */
static unsigned fuzz_pick(fuzz_bytes *b, unsigned n) {
  if (b->n == 0) return 0;
  b->n--;
  return *b->p++ % n;
}

/* The working table (the fake's) and the fuzzed one. */
static PJRT_Api fuzz_ok, fuzz_api;
/* The error code fuzzed failures carry: PJRT's, 0, or garbage. */
static int fuzz_code;

static PJRT_Error *fuzz_fail(const char *fn) {
  static const int codes[] = {PJRT_Error_Code_UNIMPLEMENTED,
                              PJRT_Error_Code_INTERNAL,
                              PJRT_Error_Code_INVALID_ARGUMENT, 0, 99, -5};
  PJRT_Error *e = fail(PJRT_Error_Code_INTERNAL, "fuzz: %s fails", fn);
  e->code = (PJRT_Error_Code)codes[(unsigned)fuzz_code % 6];
  return e;
}

/* ---- failing entries: one per function, returning an error at once ---- */

#define FUZZ_FAILING(X)                                                       \
  X(PJRT_Plugin_Initialize) X(PJRT_Plugin_Attributes) X(PJRT_Event_Await)     \
  X(PJRT_Client_Create) X(PJRT_Client_AddressableDevices)                     \
  X(PJRT_Client_Compile) X(PJRT_Client_BufferFromHostBuffer)                  \
  X(PJRT_Device_GetDescription) X(PJRT_DeviceDescription_Id)                  \
  X(PJRT_DeviceDescription_Kind) X(PJRT_DeviceDescription_Attributes)         \
  X(PJRT_LoadedExecutable_Execute) X(PJRT_LoadedExecutable_GetExecutable)     \
  X(PJRT_LoadedExecutable_AddressableDevices) X(PJRT_Executable_NumOutputs)   \
  X(PJRT_Buffer_ToHostBuffer) X(PJRT_Buffer_CopyToDevice)                     \
  X(PJRT_Buffer_ReadyEvent)

#define FUZZ_DEFINE_FAIL(f)                                                   \
  static PJRT_Error *fail_##f(f##_Args *a) {                                  \
    (void)a;                                                                  \
    return fuzz_fail(#f);                                                     \
  }
FUZZ_FAILING(FUZZ_DEFINE_FAIL)

/* ---- lying entries: success with NULL outputs or garbage counts ---- */

static PJRT_Error *lie_attributes(PJRT_Plugin_Attributes_Args *a) {
  a->attributes = NULL;
  a->num_attributes = fuzz_code & 1 ? (size_t)-1 : 3;
  return NULL;
}
static PJRT_Error *lie_client_create(PJRT_Client_Create_Args *a) {
  a->client = NULL;
  return NULL;
}
static PJRT_Error *lie_devices(PJRT_Client_AddressableDevices_Args *a) {
  PJRT_Error *e = fuzz_ok.PJRT_Client_AddressableDevices(a);
  if (e) return e;
  if (fuzz_code & 1) a->addressable_devices = NULL;
  else a->num_addressable_devices = fuzz_code & 2 ? 0 : (size_t)1 << 40;
  return NULL;
}
static PJRT_Error *lie_kind(PJRT_DeviceDescription_Kind_Args *a) {
  a->device_kind = NULL;
  a->device_kind_size = 7;
  return NULL;
}
static PJRT_Error *lie_device_attrs(PJRT_DeviceDescription_Attributes_Args *a) {
  a->attributes = NULL;
  a->num_attributes = 2;
  return NULL;
}
static PJRT_Error *lie_compile(PJRT_Client_Compile_Args *a) {
  a->executable = NULL;
  return NULL;
}
static PJRT_Error *lie_from_host(PJRT_Client_BufferFromHostBuffer_Args *a) {
  a->buffer = NULL;
  a->done_with_host_buffer = NULL;
  return NULL;
}
static PJRT_Error *lie_execute(PJRT_LoadedExecutable_Execute_Args *a) {
  (void)a; /* no outputs, no events */
  return NULL;
}
static PJRT_Error *lie_num_outputs(PJRT_Executable_NumOutputs_Args *a) {
  a->num_outputs = (size_t)fuzz_code * 1000;
  return NULL;
}
static PJRT_Error *lie_loaded_devices(
    PJRT_LoadedExecutable_AddressableDevices_Args *a) {
  a->addressable_devices = NULL;
  a->num_addressable_devices = (size_t)fuzz_code;
  return NULL;
}
static PJRT_Error *lie_to_host(PJRT_Buffer_ToHostBuffer_Args *a) {
  if (a->dst) return fuzz_ok.PJRT_Buffer_ToHostBuffer(a);
  a->dst_size = (size_t)fuzz_code; /* the size query lies */
  return NULL;
}
static PJRT_Error *lie_copy(PJRT_Buffer_CopyToDevice_Args *a) {
  a->dst_buffer = NULL;
  return NULL;
}
static PJRT_Error *lie_get_executable(
    PJRT_LoadedExecutable_GetExecutable_Args *a) {
  a->executable = NULL;
  return NULL;
}
static void lie_message(PJRT_Error_Message_Args *a) {
  a->message = NULL;
  a->message_size = 12;
}
static PJRT_Error *lie_getcode(PJRT_Error_GetCode_Args *a) {
  a->code = (PJRT_Error_Code)(1000 + fuzz_code);
  return NULL;
}

/* ---- the table ---- */

/* Field f: working, NULL, failing, or (when there is one) lying. */
#define FUZZ_SLOT(b, f, lie)                                                  \
  do {                                                                        \
    unsigned k_ = fuzz_pick(b, (lie) ? 4 : 3);                                \
    fuzz_api.f = k_ == 0 ? fuzz_ok.f : k_ == 1 ? NULL                         \
               : k_ == 2 ? fail_##f : (lie);                                  \
  } while (0)

static void fuzz_fill(fuzz_bytes *b) {
  fuzz_api = fuzz_ok;
  fuzz_code = (int)fuzz_pick(b, 16);
  static const int majors[] = {PJRT_API_MAJOR, 1, -1};
  fuzz_api.pjrt_api_version.major_version = majors[fuzz_pick(b, 3)];
  fuzz_api.pjrt_api_version.minor_version = (int)fuzz_pick(b, 80);
  static const size_t sizes[] = {
      PJRT_Api_STRUCT_SIZE, sizeof(size_t),
      offsetof(PJRT_Api, PJRT_Client_Create),
      PJRT_STRUCT_SIZE(PJRT_Api, PJRT_Buffer_ToHostBuffer),
      PJRT_STRUCT_SIZE(PJRT_Api, PJRT_Buffer_CopyToDevice)};
  fuzz_api.struct_size = sizes[fuzz_pick(b, 5)];
  FUZZ_SLOT(b, PJRT_Plugin_Initialize, NULL);
  FUZZ_SLOT(b, PJRT_Plugin_Attributes, lie_attributes);
  FUZZ_SLOT(b, PJRT_Event_Await, NULL);
  FUZZ_SLOT(b, PJRT_Client_Create, lie_client_create);
  FUZZ_SLOT(b, PJRT_Client_AddressableDevices, lie_devices);
  FUZZ_SLOT(b, PJRT_Client_Compile, lie_compile);
  FUZZ_SLOT(b, PJRT_Client_BufferFromHostBuffer, lie_from_host);
  FUZZ_SLOT(b, PJRT_Device_GetDescription, NULL);
  FUZZ_SLOT(b, PJRT_DeviceDescription_Id, NULL);
  FUZZ_SLOT(b, PJRT_DeviceDescription_Kind, lie_kind);
  FUZZ_SLOT(b, PJRT_DeviceDescription_Attributes, lie_device_attrs);
  FUZZ_SLOT(b, PJRT_LoadedExecutable_Execute, lie_execute);
  FUZZ_SLOT(b, PJRT_LoadedExecutable_GetExecutable, lie_get_executable);
  FUZZ_SLOT(b, PJRT_LoadedExecutable_AddressableDevices, lie_loaded_devices);
  FUZZ_SLOT(b, PJRT_Executable_NumOutputs, lie_num_outputs);
  FUZZ_SLOT(b, PJRT_Buffer_ToHostBuffer, lie_to_host);
  FUZZ_SLOT(b, PJRT_Buffer_CopyToDevice, lie_copy);
  FUZZ_SLOT(b, PJRT_Buffer_ReadyEvent, NULL);
  if (fuzz_pick(b, 4) == 3) fuzz_api.PJRT_Error_Message = lie_message;
  if (fuzz_pick(b, 4) == 3) fuzz_api.PJRT_Error_GetCode = lie_getcode;
}

static const char fuzz_add[] =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* A launch over the client's devices (replicated add). */
static void fuzz_launch(xrt_client *c, xrt_executable *exe, int n,
                        xrt_buffer *const *in) {
  xrt_buffer *args[3][2], *outs[3][1];
  xrt_buffer *const *lists[3];
  xrt_buffer **olists[3];
  int ok = 1;
  for (int r = 0; r < n; r++) {
    args[r][0] = args[r][1] = NULL;
    if (xrt_buffer_copy_to_device(in[0], xrt_client_device(c, r),
                                  &args[r][0]) != XRT_OK ||
        xrt_buffer_copy_to_device(in[1], xrt_client_device(c, r),
                                  &args[r][1]) != XRT_OK)
      ok = 0;
    lists[r] = args[r];
    olists[r] = outs[r];
  }
  xrt_event *done = NULL;
  if (ok && xrt_execute_multi(exe, lists, n, 2, olists, 1, NULL, &done) ==
                XRT_OK) {
    xrt_event_await(done);
    xrt_event_release(done);
    for (int r = 0; r < n; r++) xrt_buffer_release(outs[r][0]);
  }
  for (int r = 0; r < n; r++) {
    xrt_buffer_release(args[r][0]);
    xrt_buffer_release(args[r][1]);
  }
}

static void fuzz_use_client(xrt_client *c, int n) {
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_shape s = {XRT_F32, 1, {4}};
  const float v[4] = {1, 2, 3, 4};
  float back[4];
  xrt_buffer *in[2] = {NULL, NULL}, *moved = NULL, *out = NULL;
  if (xrt_buffer_from_host(c, dev, &s, v, &in[0]) != XRT_OK ||
      xrt_buffer_from_host(c, dev, &s, v, &in[1]) != XRT_OK)
    goto done;
  xrt_buffer_to_host(in[0], back, sizeof back);
  if (xrt_buffer_copy_to_device(in[0], xrt_client_device(c, n - 1), &moved) ==
      XRT_OK)
    xrt_buffer_to_host(moved, back, sizeof back);
  xrt_executable *exe = NULL;
  if (xrt_compile(c, fuzz_add, sizeof fuzz_add - 1, NULL, &exe) == XRT_OK) {
    if (xrt_execute(exe, dev, in, 2, &out, 1, NULL) == XRT_OK) {
      xrt_buffer_to_host(out, back, sizeof back);
      xrt_buffer *again = NULL;
      if (xrt_buffer_copy_to_device(out, xrt_client_device(c, n - 1),
                                    &again) == XRT_OK)
        xrt_buffer_release(again);
      xrt_buffer_release(out);
    }
    xrt_executable_release(exe);
  }
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = n;
  if (n > 1 && xrt_compile(c, fuzz_add, sizeof fuzz_add - 1, &o, &exe) ==
                   XRT_OK) {
    fuzz_launch(c, exe, n, in);
    xrt_executable_release(exe);
  }
done:
  xrt_buffer_release(moved);
  xrt_buffer_release(in[0]);
  xrt_buffer_release(in[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!fuzz_ok.struct_size) fuzz_ok = *GetPjrtApi();
  fuzz_bytes b = {data, size};
  int n = 1 + (int)fuzz_pick(&b, 3);
  fuzz_fill(&b);
  xrt_context_options co;
  xrt_context_options_init(&co);
  co.builtin_plugins = false;
  co.env_plugins = false;
  xrt_context *ctx = NULL;
  if (xrt_context_create(&co, &ctx) != XRT_OK) abort();
  if (xrt_context_register_pjrt(ctx, "fz", &fuzz_api, NULL) == XRT_OK) {
    xrt_client_options o;
    xrt_client_options_init(&o);
    o.context = ctx;
    o.plugin = "fz";
    o.num_devices = n;
    xrt_client *client = NULL;
    if (xrt_client_create(&o, &client) == XRT_OK) {
      fuzz_use_client(client, xrt_client_device_count(client) < n
                                  ? xrt_client_device_count(client) : n);
      xrt_client_release(client);
    }
  }
  if (xrt_context_release(ctx) != XRT_OK) abort();
  return 0;
}
