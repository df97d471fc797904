/*
 * test_pjrt_host.c - a PJRT host in C driving a PJRT plugin the way JAX
 * does, against libxrt_pjrt.so (xrt as a PJRT plugin, issue #24).
 *
 * The plugin library is XRT_TEST_PJRT_PLUGIN (a compile-time define, the
 * path of $(BUILD)/libxrt_pjrt.so), overridden at run time by the
 * environment variable XRT_PJRT_PLUGIN.  The test sees the plugin only
 * through dlopen + GetPjrtApi and the PJRT C API 0.60 as declared in
 * src/pjrt/pjrt_abi.h (the upstream names).
 *
 * Covered: the table (version, size, no NULL entry, one exported symbol);
 * Plugin_Initialize and Plugin_Attributes; a client with `num_devices`
 * create options, its devices, descriptions and memories; buffers from host
 * (done_with_host_buffer events, the host copy overwritten after them, the
 * three host buffer semantics, strides), metadata and ToHostBuffer; compile
 * of StableHLO text with empty and with JAX-style serialized
 * CompileOptionsProto (test/pjrt_proto_util.h) and execution on one device
 * and replicated on 4 with an all_reduce; copies between devices, delete;
 * error codes and messages (bad program with its line:col, unknown format,
 * unimplemented entries naming the function); bad host input (struct_size
 * too small, NULL args and fields, released objects, wrong Execute
 * arguments) answered with INVALID_ARGUMENT; two threads on one client.
 * Issue #25 (coverage of src/pjrt_plugin) adds: every entry called with
 * NULL args, a struct_size of 1, zeroed fields and a handle the plugin
 * never made; every element type and layout of a host buffer and its
 * targets (memory, device, another client's); create options (memory,
 * threads, injected faults of each kind); replicas launched one
 * participant at a time through execute_device, failing ones and their
 * events; multi-device launches given bad lists, options or arguments;
 * what sends a call off the one-device dispatch path (17 and 129
 * arguments, 17 outputs, 33 replicas, no arguments); malformed
 * CompileOptionsProto bytes, offset by offset; objects used after their
 * client is destroyed; DefaultDeviceAssignment, lookups and error
 * objects; the general Execute path's last ways in (send/recv op counts
 * without callbacks, recv callbacks, an older Execute_Args without
 * execute_device on both paths, a participant whose xrt launch fails).
 * Every object is destroyed (clean under ASan/UBSan, LSan and TSan).
 *
 * Expected values are computed here, never read back from the plugin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/pjrt/pjrt_abi.h"
#include "pjrt_proto_util.h"
#include "pjrt_host_util.h"

#ifndef XRT_TEST_PJRT_PLUGIN
#define XRT_TEST_PJRT_PLUGIN "build/libxrt_pjrt.so"
#endif

#define NDEV 4

/* The plugin, opened once for the whole group. */
static void *g_lib;
static PJRT_Error *g_init_error; /* what PJRT_Plugin_Initialize returned */
static char g_init_msg[512];

/* ======================================================================
 * Errors
 * ==================================================================== */

/* An optional function: success (returns true), or UNIMPLEMENTED with a
 * message naming it (returns false); anything else fails. */
#define OK_OR_UNIMPL(call, name) ok_or_unimpl_at((call), (name), __LINE__)
static bool ok_or_unimpl_at(PJRT_Error *e, const char *name, int line) {
  if (!e) return true;
  char m[1024];
  int c = err_code(e);
  err_text(e, m, sizeof m);
  err_destroy(e);
  if (c != PJRT_Error_Code_UNIMPLEMENTED)
    fail_msg("line %d: %s: %s (%d), want success or UNIMPLEMENTED: %s", line,
             name, code_name(c), c, m);
  if (!strstr(m, name))
    fail_msg("line %d: %s: UNIMPLEMENTED message \"%s\" does not name it",
             line, name, m);
  return false;
}

/* A (pointer, size) string of the ABI as a C string (truncated). */
static const char *str_of(const char *s, size_t n, char *buf, size_t cap) {
  size_t k = n < cap - 1 ? n : cap - 1;
  if (s && k) memcpy(buf, s, k);
  buf[k] = 0;
  return buf;
}

/* A non-empty (pointer, size) string without NUL bytes inside. */
static void assert_pjrt_string(const char *s, size_t n) {
  assert_non_null(s);
  assert_true(n > 0);
  assert_null(memchr(s, 0, n));
}

/* ======================================================================
 * Clients, devices
 * ==================================================================== */

static PJRT_Error *client_create(int64_t ndev, PJRT_Client **out) {
  PJRT_NamedValue opt = nv_int("num_devices", ndev);
  ARGS(PJRT_Client_Create_Args, a);
  a.create_options = ndev > 0 ? &opt : NULL;
  a.num_options = ndev > 0 ? 1 : 0;
  PJRT_Error *e = API->PJRT_Client_Create(&a);
  *out = a.client;
  return e;
}

static PJRT_Client *new_client(int64_t ndev) {
  PJRT_Client *c = NULL;
  OK(client_create(ndev, &c));
  assert_non_null(c);
  return c;
}

static PJRT_DeviceDescription *desc_of(PJRT_Device *d) {
  ARGS(PJRT_Device_GetDescription_Args, a);
  a.device = d;
  OK(API->PJRT_Device_GetDescription(&a));
  assert_non_null(a.device_description);
  return a.device_description;
}

static int device_id(PJRT_Device *d) {
  ARGS(PJRT_DeviceDescription_Id_Args, a);
  a.device_description = desc_of(d);
  a.id = -12345;
  OK(API->PJRT_DeviceDescription_Id(&a));
  return a.id;
}

static PJRT_Memory *default_memory(PJRT_Device *d) {
  ARGS(PJRT_Device_DefaultMemory_Args, a);
  a.device = d;
  OK(API->PJRT_Device_DefaultMemory(&a));
  assert_non_null(a.memory);
  return a.memory;
}

/* ======================================================================
 * Buffers
 * ==================================================================== */

static size_t type_bytes(PJRT_Buffer_Type t) {
  switch (t) {
    case PJRT_Buffer_Type_PRED: case PJRT_Buffer_Type_S8:
    case PJRT_Buffer_Type_U8: return 1;
    case PJRT_Buffer_Type_S16: case PJRT_Buffer_Type_U16:
    case PJRT_Buffer_Type_F16: case PJRT_Buffer_Type_BF16: return 2;
    case PJRT_Buffer_Type_S32: case PJRT_Buffer_Type_U32:
    case PJRT_Buffer_Type_F32: return 4;
    case PJRT_Buffer_Type_S64: case PJRT_Buffer_Type_U64:
    case PJRT_Buffer_Type_F64: case PJRT_Buffer_Type_C64: return 8;
    case PJRT_Buffer_Type_C128: return 16;
    default: return 0;
  }
}

static PJRT_Error *from_host(PJRT_Client *c, PJRT_Device *d,
                             PJRT_Buffer_Type t, const void *data,
                             const int64_t *dims, size_t nd,
                             PJRT_HostBufferSemantics sem, PJRT_Event **done,
                             PJRT_Buffer **out) {
  ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
  a.client = c;
  a.data = data;
  a.type = t;
  a.dims = dims;
  a.num_dims = nd;
  a.host_buffer_semantics = sem;
  a.device = d;
  PJRT_Error *e = API->PJRT_Client_BufferFromHostBuffer(&a);
  *done = a.done_with_host_buffer;
  *out = a.buffer;
  return e;
}

/* Upload, await done_with_host_buffer, return the buffer. */
static PJRT_Buffer *upload(PJRT_Client *c, PJRT_Device *d, PJRT_Buffer_Type t,
                           const void *data, const int64_t *dims, size_t nd) {
  PJRT_Event *done = NULL;
  PJRT_Buffer *b = NULL;
  OK(from_host(c, d, t, data, dims, nd,
               PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
               &done, &b));
  assert_non_null(b);
  await_ok(done);
  return b;
}


/* ToHostBuffer as JAX does: query the size (dst NULL), then copy; the size
 * must be `bytes`. */
static void download(PJRT_Buffer *b, void *dst, size_t bytes) {
  ARGS(PJRT_Buffer_ToHostBuffer_Args, q);
  q.src = b;
  q.dst = NULL;
  q.dst_size = 0;
  OK(API->PJRT_Buffer_ToHostBuffer(&q));
  assert_int_equal(q.dst_size, bytes);
  if (q.event) await_ok(q.event); /* a size query may or may not give one */
  ARGS(PJRT_Buffer_ToHostBuffer_Args, a);
  a.src = b;
  a.dst = dst;
  a.dst_size = bytes;
  OK(API->PJRT_Buffer_ToHostBuffer(&a));
  await_ok(a.event);
}

static PJRT_Device *buffer_device(PJRT_Buffer *b) {
  ARGS(PJRT_Buffer_Device_Args, a);
  a.buffer = b;
  OK(API->PJRT_Buffer_Device(&a));
  return a.device;
}

static void check_buffer_shape(PJRT_Buffer *b, PJRT_Buffer_Type t,
                               const int64_t *dims, size_t nd) {
  ARGS(PJRT_Buffer_ElementType_Args, et);
  et.buffer = b;
  OK(API->PJRT_Buffer_ElementType(&et));
  assert_int_equal(et.type, t);
  ARGS(PJRT_Buffer_Dimensions_Args, dm);
  dm.buffer = b;
  OK(API->PJRT_Buffer_Dimensions(&dm));
  assert_int_equal(dm.num_dims, nd);
  if (nd) assert_non_null(dm.dims);
  for (size_t i = 0; i < nd; i++) assert_int_equal(dm.dims[i], dims[i]);
}

/* ======================================================================
 * Compile, execute
 * ==================================================================== */

/* Compile `code` in format `fmt`; the code and format are handed over in
 * exactly-sized heap copies without a NUL (as a host's bytes are). */
static PJRT_Error *compile(PJRT_Client *c, const char *code, const char *fmt,
                           const void *opts, size_t opts_n,
                           PJRT_LoadedExecutable **out) {
  size_t cn = strlen(code), fn = strlen(fmt);
  char *cb = malloc(cn ? cn : 1), *fb = malloc(fn ? fn : 1);
  assert_non_null(cb);
  assert_non_null(fb);
  memcpy(cb, code, cn);
  memcpy(fb, fmt, fn);
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = cb;
  prog.code_size = cn;
  prog.format = fb;
  prog.format_size = fn;
  char *ob = NULL;
  if (opts_n) {
    ob = malloc(opts_n);
    assert_non_null(ob);
    memcpy(ob, opts, opts_n);
  }
  ARGS(PJRT_Client_Compile_Args, a);
  a.client = c;
  a.program = &prog;
  a.compile_options = ob;
  a.compile_options_size = opts_n;
  PJRT_Error *e = API->PJRT_Client_Compile(&a);
  free(cb);
  free(fb);
  free(ob);
  *out = a.executable;
  return e;
}

static PJRT_LoadedExecutable *compile_ok(PJRT_Client *c, const char *code,
                                         const void *opts, size_t opts_n) {
  PJRT_LoadedExecutable *x = NULL;
  OK(compile(c, code, "mlir", opts, opts_n, &x));
  assert_non_null(x);
  return x;
}

static void loaded_destroy(PJRT_LoadedExecutable *x) {
  ARGS(PJRT_LoadedExecutable_Destroy_Args, a);
  a.executable = x;
  OK(API->PJRT_LoadedExecutable_Destroy(&a));
}

static PJRT_Executable *get_executable(PJRT_LoadedExecutable *x) {
  ARGS(PJRT_LoadedExecutable_GetExecutable_Args, a);
  a.loaded_executable = x;
  OK(API->PJRT_LoadedExecutable_GetExecutable(&a));
  assert_non_null(a.executable);
  return a.executable;
}

static void executable_destroy(PJRT_Executable *x) {
  ARGS(PJRT_Executable_Destroy_Args, a);
  a.executable = x;
  OK(API->PJRT_Executable_Destroy(&a));
}

/* Execute on ndev devices with nargs arguments each (args[dev * nargs + i])
 * and nout outputs each (outs[dev * nout + j]); exec_dev as the Execute
 * field.  The completion events are returned in evs (NULL: not asked). */
#define MAXD 8
#define MAXA 8
static PJRT_Error *execute(PJRT_LoadedExecutable *x, size_t ndev,
                           size_t nargs, PJRT_Buffer *const *args,
                           size_t nout, PJRT_Buffer **outs, PJRT_Event **evs,
                           PJRT_Device *exec_dev) {
  PJRT_Buffer *const *arg_lists[MAXD];
  PJRT_Buffer **out_lists[MAXD];
  for (size_t d = 0; d < ndev && d < MAXD; d++) {
    arg_lists[d] = args + d * nargs;
    out_lists[d] = outs + d * nout;
  }
  for (size_t i = 0; i < ndev * nout; i++) outs[i] = NULL;
  if (evs)
    for (size_t d = 0; d < ndev; d++) evs[d] = NULL;
  PJRT_ExecuteOptions opt;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  opt.launch_id = 7;
  ARGS(PJRT_LoadedExecutable_Execute_Args, a);
  a.executable = x;
  a.options = &opt;
  a.argument_lists = arg_lists;
  a.num_devices = ndev;
  a.num_args = nargs;
  a.output_lists = out_lists;
  a.device_complete_events = evs;
  a.execute_device = exec_dev;
  return API->PJRT_LoadedExecutable_Execute(&a);
}

/* Execute that must succeed; the completion events are awaited. */
static void execute_ok(PJRT_LoadedExecutable *x, size_t ndev, size_t nargs,
                       PJRT_Buffer *const *args, size_t nout,
                       PJRT_Buffer **outs) {
  PJRT_Event *evs[MAXD];
  OK(execute(x, ndev, nargs, args, nout, outs, evs, NULL));
  for (size_t d = 0; d < ndev; d++) await_ok(evs[d]);
  for (size_t i = 0; i < ndev * nout; i++) assert_non_null(outs[i]);
}

/* ======================================================================
 * Programs
 * ==================================================================== */

static const char *k_add =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> "
    "tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n";

/* The sum over replicas 0..3, and each replica's id; the replica count
 * comes from the compile options only. */
static const char *k_allreduce =
    "func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<ui32>) {\n"
    "  %r = \"stablehlo.all_reduce\"(%x) ({\n"
    "    ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
    "      %s = stablehlo.add %p, %q : tensor<f32>\n"
    "      stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "    : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %i = stablehlo.replica_id : tensor<ui32>\n"
    "  return %r, %i : tensor<4xf32>, tensor<ui32>\n"
    "}\n";

/* The same as JAX lowers jax.pmap(lambda x: jax.lax.psum(x, 'i')). */
static const char *k_allreduce_jax =
    "module @jit_psum attributes {mhlo.num_partitions = 1 : i32, "
    "mhlo.num_replicas = 4 : i32} {\n"
    "  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32> "
    "{jax.result_info = \"\"}) {\n"
    "    %0 = \"stablehlo.all_reduce\"(%arg0) ({\n"
    "    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):\n"
    "      %1 = stablehlo.add %arg1, %arg2 : tensor<f32>\n"
    "      stablehlo.return %1 : tensor<f32>\n"
    "    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : "
    "(tensor<4xf32>) -> tensor<4xf32>\n"
    "    return %0 : tensor<4xf32>\n"
    "  }\n"
    "}\n";

/* The NDEV devices of c in d, and k_allreduce compiled for NDEV replicas
 * on them. */
static PJRT_LoadedExecutable *compile_allreduce(PJRT_Client *c,
                                                PJRT_Device **d) {
  get_devices(c, d, NDEV);
  int64_t ids[NDEV];
  for (int i = 0; i < NDEV; i++) ids[i] = device_id(d[i]);
  pb_buf o;
  pb_compile_options(&o, NDEV, 1, ids);
  return compile_ok(c, k_allreduce, o.b, o.n);
}

/* %7 is undefined: the mistake is at line 2, column 26. */
static const char *k_bad =
    "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
    "  %0 = stablehlo.add %a, %7 : tensor<f32>\n"
    "  func.return %0 : tensor<f32>\n"
    "}\n";

/* ======================================================================
 * Group setup: the library, the table, Plugin_Initialize
 * ==================================================================== */

static const char *plugin_path(void) {
  const char *p = getenv("XRT_PJRT_PLUGIN");
  return p && *p ? p : XRT_TEST_PJRT_PLUGIN;
}

typedef const PJRT_Api *(*get_api_fn)(void);

static int group_setup(void **state) {
  (void)state;
  g_lib = dlopen(plugin_path(), RTLD_NOW | RTLD_LOCAL);
  if (!g_lib) {
    fprintf(stderr, "dlopen %s: %s\n", plugin_path(), dlerror());
    return -1;
  }
  get_api_fn get = NULL;
  *(void **)&get = dlsym(g_lib, "GetPjrtApi");
  if (!get) {
    fprintf(stderr, "%s: no GetPjrtApi\n", plugin_path());
    return -1;
  }
  g_api = get();
  if (!g_api || !g_api->PJRT_Plugin_Initialize) {
    fprintf(stderr, "%s: GetPjrtApi gave no usable table\n", plugin_path());
    return -1;
  }
  /* Once per process, before anything else, as JAX does. */
  ARGS(PJRT_Plugin_Initialize_Args, a);
  g_init_error = g_api->PJRT_Plugin_Initialize(&a);
  if (g_init_error) {
    if (g_api->PJRT_Error_Message) err_text(g_init_error, g_init_msg,
                                            sizeof g_init_msg);
    if (g_api->PJRT_Error_Destroy) err_destroy(g_init_error);
  }
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  if (g_lib) dlclose(g_lib);
  g_lib = NULL;
  g_api = NULL;
  return 0;
}

/* ======================================================================
 * 1. The table
 * ==================================================================== */

/* The entries that return a PJRT_Error (all but Error_Destroy and
 * Error_Message), in table order. */
#define PJRT_FNS_ERR(X)                                                      \
  X(PJRT_Error_GetCode) X(PJRT_Plugin_Initialize) X(PJRT_Plugin_Attributes)  \
  X(PJRT_Event_Destroy) X(PJRT_Event_IsReady) X(PJRT_Event_Error)            \
  X(PJRT_Event_Await) X(PJRT_Event_OnReady) X(PJRT_Client_Create)            \
  X(PJRT_Client_Destroy) X(PJRT_Client_PlatformName)                         \
  X(PJRT_Client_ProcessIndex) X(PJRT_Client_PlatformVersion)                 \
  X(PJRT_Client_Devices) X(PJRT_Client_AddressableDevices)                   \
  X(PJRT_Client_LookupDevice) X(PJRT_Client_LookupAddressableDevice)         \
  X(PJRT_Client_AddressableMemories) X(PJRT_Client_Compile)                  \
  X(PJRT_Client_DefaultDeviceAssignment)                                     \
  X(PJRT_Client_BufferFromHostBuffer) X(PJRT_DeviceDescription_Id)           \
  X(PJRT_DeviceDescription_ProcessIndex)                                     \
  X(PJRT_DeviceDescription_Attributes) X(PJRT_DeviceDescription_Kind)        \
  X(PJRT_DeviceDescription_DebugString) X(PJRT_DeviceDescription_ToString)   \
  X(PJRT_Device_GetDescription) X(PJRT_Device_IsAddressable)                 \
  X(PJRT_Device_LocalHardwareId) X(PJRT_Device_AddressableMemories)          \
  X(PJRT_Device_DefaultMemory) X(PJRT_Device_MemoryStats) X(PJRT_Memory_Id)  \
  X(PJRT_Memory_Kind) X(PJRT_Memory_DebugString) X(PJRT_Memory_ToString)     \
  X(PJRT_Memory_AddressableByDevices) X(PJRT_Executable_Destroy)             \
  X(PJRT_Executable_Name) X(PJRT_Executable_NumReplicas)                     \
  X(PJRT_Executable_NumPartitions) X(PJRT_Executable_NumOutputs)             \
  X(PJRT_Executable_SizeOfGeneratedCodeInBytes)                              \
  X(PJRT_Executable_GetCostAnalysis) X(PJRT_Executable_OutputMemoryKinds)    \
  X(PJRT_Executable_OptimizedProgram) X(PJRT_Executable_Serialize)           \
  X(PJRT_LoadedExecutable_Destroy) X(PJRT_LoadedExecutable_GetExecutable)    \
  X(PJRT_LoadedExecutable_AddressableDevices)                                \
  X(PJRT_LoadedExecutable_Delete) X(PJRT_LoadedExecutable_IsDeleted)         \
  X(PJRT_LoadedExecutable_Execute) X(PJRT_Executable_DeserializeAndLoad)     \
  X(PJRT_LoadedExecutable_Fingerprint) X(PJRT_Buffer_Destroy)                \
  X(PJRT_Buffer_ElementType) X(PJRT_Buffer_Dimensions)                       \
  X(PJRT_Buffer_UnpaddedDimensions) X(PJRT_Buffer_DynamicDimensionIndices)   \
  X(PJRT_Buffer_GetMemoryLayout) X(PJRT_Buffer_OnDeviceSizeInBytes)          \
  X(PJRT_Buffer_Device) X(PJRT_Buffer_Memory) X(PJRT_Buffer_Delete)          \
  X(PJRT_Buffer_IsDeleted) X(PJRT_Buffer_CopyToDevice)                       \
  X(PJRT_Buffer_ToHostBuffer) X(PJRT_Buffer_IsOnCpu)                         \
  X(PJRT_Buffer_ReadyEvent) X(PJRT_Buffer_UnsafePointer)                     \
  X(PJRT_Buffer_IncreaseExternalReferenceCount)                              \
  X(PJRT_Buffer_DecreaseExternalReferenceCount)                              \
  X(PJRT_Buffer_OpaqueDeviceMemoryDataPointer)                               \
  X(PJRT_CopyToDeviceStream_Destroy) X(PJRT_CopyToDeviceStream_AddChunk)     \
  X(PJRT_CopyToDeviceStream_TotalBytes)                                      \
  X(PJRT_CopyToDeviceStream_GranuleSize)                                     \
  X(PJRT_CopyToDeviceStream_CurrentBytes)                                    \
  X(PJRT_TopologyDescription_Create) X(PJRT_TopologyDescription_Destroy)     \
  X(PJRT_TopologyDescription_PlatformName)                                   \
  X(PJRT_TopologyDescription_PlatformVersion)                                \
  X(PJRT_TopologyDescription_GetDeviceDescriptions)                          \
  X(PJRT_TopologyDescription_Serialize)                                      \
  X(PJRT_TopologyDescription_Attributes) X(PJRT_Compile)                     \
  X(PJRT_Executable_OutputElementTypes) X(PJRT_Executable_OutputDimensions)  \
  X(PJRT_Buffer_CopyToMemory) X(PJRT_Client_CreateViewOfDeviceBuffer)        \
  X(PJRT_Executable_Fingerprint) X(PJRT_Client_TopologyDescription)          \
  X(PJRT_Executable_GetCompiledMemoryStats) X(PJRT_Memory_Kind_Id)           \
  X(PJRT_ExecuteContext_Create) X(PJRT_ExecuteContext_Destroy)               \
  X(PJRT_Buffer_CopyRawToHost)                                               \
  X(PJRT_AsyncHostToDeviceTransferManager_Destroy)                           \
  X(PJRT_AsyncHostToDeviceTransferManager_TransferData)                      \
  X(PJRT_Client_CreateBuffersForAsyncHostToDevice)

/* Every entry of the table, in order. */
#define PJRT_FNS(X) \
  X(PJRT_Error_Destroy) X(PJRT_Error_Message) PJRT_FNS_ERR(X)

static void test_api_table(void **state) {
  (void)state;
  assert_non_null(API);
  /* the same table every time */
  get_api_fn get = NULL;
  *(void **)&get = dlsym(g_lib, "GetPjrtApi");
  assert_ptr_equal(get(), API);

  assert_true(API->struct_size >= PJRT_Api_STRUCT_SIZE);
  assert_int_equal(API->pjrt_api_version.struct_size,
                   PJRT_Api_Version_STRUCT_SIZE);
  assert_int_equal(API->pjrt_api_version.major_version, PJRT_API_MAJOR);
  assert_true(API->pjrt_api_version.minor_version >= PJRT_API_MINOR);

  /* every entry named in the header, in order, and nothing left over */
  size_t n = 0;
  size_t end = offsetof(PJRT_Api, PJRT_Error_Destroy);
#define CHECK_FN(f)                                                    \
  if (!API->f) fail_msg("PJRT_Api entry %s is NULL", #f);              \
  assert_int_equal(offsetof(PJRT_Api, f), end);                        \
  end = offsetof(PJRT_Api, f) + sizeof API->f;                         \
  n++;
  PJRT_FNS(CHECK_FN)
#undef CHECK_FN
  assert_int_equal(end, PJRT_Api_STRUCT_SIZE);
  assert_int_equal(n, 104);

  /* the library exports the entry point, not xrt's own API */
  assert_null(dlsym(g_lib, "xrt_compile"));
  assert_null(dlsym(g_lib, "xrt_context_create"));
  assert_null(dlsym(g_lib, "xrt_plugin_get_api"));
  assert_null(dlsym(g_lib, "xrt_sim_plugin_api"));
}

/* ======================================================================
 * 2. Plugin_Initialize, Plugin_Attributes
 * ==================================================================== */

static void check_named_value(const PJRT_NamedValue *v) {
  char nb[128];
  assert_true(v->struct_size >= PJRT_NamedValue_STRUCT_SIZE);
  assert_pjrt_string(v->name, v->name_size);
  str_of(v->name, v->name_size, nb, sizeof nb);
  switch (v->type) {
    case PJRT_NamedValue_kString:
      assert_non_null(v->string_value);
      assert_null(memchr(v->string_value, 0, v->value_size));
      break;
    case PJRT_NamedValue_kInt64:
    case PJRT_NamedValue_kFloat:
    case PJRT_NamedValue_kBool:
      if (v->value_size != 1)
        fail_msg("attribute %s: value_size %zu for a scalar", nb,
                 v->value_size);
      break;
    case PJRT_NamedValue_kInt64List:
      if (v->value_size) assert_non_null(v->int64_array_value);
      break;
    default:
      fail_msg("attribute %s: type %d", nb, (int)v->type);
  }
}

static const PJRT_NamedValue *find_nv(const PJRT_NamedValue *v, size_t n,
                                      const char *name) {
  for (size_t i = 0; i < n; i++)
    if (v[i].name_size == strlen(name) &&
        !memcmp(v[i].name, name, v[i].name_size))
      return &v[i];
  return NULL;
}

static void test_initialize_and_attributes(void **state) {
  (void)state;
  if (g_init_error)
    fail_msg("PJRT_Plugin_Initialize failed: %s", g_init_msg);

  ARGS(PJRT_Plugin_Attributes_Args, a);
  OK(API->PJRT_Plugin_Attributes(&a));
  if (a.num_attributes) assert_non_null(a.attributes);
  for (size_t i = 0; i < a.num_attributes; i++)
    check_named_value(&a.attributes[i]);
  /* names are unique */
  for (size_t i = 0; i < a.num_attributes; i++)
    for (size_t j = i + 1; j < a.num_attributes; j++)
      assert_false(a.attributes[i].name_size == a.attributes[j].name_size &&
                   !memcmp(a.attributes[i].name, a.attributes[j].name,
                           a.attributes[i].name_size));

  /* the StableHLO versions JAX reads, when given: [major, minor, patch] */
  const PJRT_NamedValue *cur =
      find_nv(a.attributes, a.num_attributes, "stablehlo_current_version");
  const PJRT_NamedValue *min =
      find_nv(a.attributes, a.num_attributes, "stablehlo_minimum_version");
  const PJRT_NamedValue *vs[2] = {cur, min};
  for (int k = 0; k < 2; k++) {
    if (!vs[k]) continue;
    assert_int_equal(vs[k]->type, PJRT_NamedValue_kInt64List);
    assert_int_equal(vs[k]->value_size, 3);
    for (int i = 0; i < 3; i++) assert_true(vs[k]->int64_array_value[i] >= 0);
  }
  if (cur && min) {
    int cmp = 0;
    for (int i = 0; i < 3 && !cmp; i++)
      cmp = (min->int64_array_value[i] > cur->int64_array_value[i]) -
            (min->int64_array_value[i] < cur->int64_array_value[i]);
    assert_true(cmp <= 0); /* minimum <= current */
  }
  const PJRT_NamedValue *xv =
      find_nv(a.attributes, a.num_attributes, "xla_version");
  if (xv) assert_int_equal(xv->type, PJRT_NamedValue_kInt64);

  /* the attributes live as long as the process: the same array again */
  ARGS(PJRT_Plugin_Attributes_Args, b);
  OK(API->PJRT_Plugin_Attributes(&b));
  assert_int_equal(b.num_attributes, a.num_attributes);
  assert_ptr_equal(b.attributes, a.attributes);
}

/* ======================================================================
 * 3. Client, devices, memories
 * ==================================================================== */

static void test_client_devices_memories(void **state) {
  (void)state;
  PJRT_Client *c = new_client(NDEV);
  char sb[256];

  ARGS(PJRT_Client_PlatformName_Args, pn);
  pn.client = c;
  OK(API->PJRT_Client_PlatformName(&pn));
  assert_pjrt_string(pn.platform_name, pn.platform_name_size);
  ARGS(PJRT_Client_PlatformVersion_Args, pv);
  pv.client = c;
  OK(API->PJRT_Client_PlatformVersion(&pv));
  assert_pjrt_string(pv.platform_version, pv.platform_version_size);
  ARGS(PJRT_Client_ProcessIndex_Args, pi);
  pi.client = c;
  pi.process_index = -1;
  OK(API->PJRT_Client_ProcessIndex(&pi));
  assert_int_equal(pi.process_index, 0);

  ARGS(PJRT_Client_Devices_Args, all);
  all.client = c;
  OK(API->PJRT_Client_Devices(&all));
  assert_int_equal(all.num_devices, NDEV);
  PJRT_Device *d[NDEV];
  get_devices(c, d, NDEV);
  int ids[NDEV];
  for (int i = 0; i < NDEV; i++) {
    /* every device is addressable here and listed by Devices too */
    bool listed = false;
    for (int j = 0; j < NDEV; j++) listed |= all.devices[j] == d[i];
    assert_true(listed);
    ARGS(PJRT_Device_IsAddressable_Args, ia);
    ia.device = d[i];
    OK(API->PJRT_Device_IsAddressable(&ia));
    assert_true(ia.is_addressable);

    PJRT_DeviceDescription *dd = desc_of(d[i]);
    ids[i] = device_id(d[i]);
    assert_true(ids[i] >= 0);
    for (int j = 0; j < i; j++) assert_int_not_equal(ids[i], ids[j]);
    ARGS(PJRT_DeviceDescription_ProcessIndex_Args, dp);
    dp.device_description = dd;
    dp.process_index = -1;
    OK(API->PJRT_DeviceDescription_ProcessIndex(&dp));
    assert_int_equal(dp.process_index, 0);
    ARGS(PJRT_DeviceDescription_Kind_Args, kd);
    kd.device_description = dd;
    OK(API->PJRT_DeviceDescription_Kind(&kd));
    assert_pjrt_string(kd.device_kind, kd.device_kind_size);
    ARGS(PJRT_DeviceDescription_DebugString_Args, ds);
    ds.device_description = dd;
    OK(API->PJRT_DeviceDescription_DebugString(&ds));
    assert_pjrt_string(ds.debug_string, ds.debug_string_size);
    ARGS(PJRT_DeviceDescription_ToString_Args, ts);
    ts.device_description = dd;
    OK(API->PJRT_DeviceDescription_ToString(&ts));
    assert_pjrt_string(ts.to_string, ts.to_string_size);
    ARGS(PJRT_DeviceDescription_Attributes_Args, at);
    at.device_description = dd;
    OK(API->PJRT_DeviceDescription_Attributes(&at));
    if (at.num_attributes) assert_non_null(at.attributes);
    for (size_t k = 0; k < at.num_attributes; k++)
      check_named_value(&at.attributes[k]);

    /* LookupDevice by id gives this device back */
    ARGS(PJRT_Client_LookupDevice_Args, lk);
    lk.client = c;
    lk.id = ids[i];
    OK(API->PJRT_Client_LookupDevice(&lk));
    assert_ptr_equal(lk.device, d[i]);
    /* and LookupAddressableDevice by its local hardware id, if it has one */
    ARGS(PJRT_Device_LocalHardwareId_Args, lh);
    lh.device = d[i];
    OK(API->PJRT_Device_LocalHardwareId(&lh));
    assert_true(lh.local_hardware_id >= -1);
    if (lh.local_hardware_id >= 0) {
      ARGS(PJRT_Client_LookupAddressableDevice_Args, la);
      la.client = c;
      la.local_hardware_id = lh.local_hardware_id;
      OK(API->PJRT_Client_LookupAddressableDevice(&la));
      assert_ptr_equal(la.addressable_device, d[i]);
    }

    /* memories: the default one is among the device's, and says so */
    ARGS(PJRT_Device_AddressableMemories_Args, dm);
    dm.device = d[i];
    OK(API->PJRT_Device_AddressableMemories(&dm));
    assert_true(dm.num_memories >= 1);
    PJRT_Memory *def = default_memory(d[i]);
    bool found = false;
    for (size_t k = 0; k < dm.num_memories; k++) found |= dm.memories[k] == def;
    assert_true(found);
    ARGS(PJRT_Memory_Kind_Args, mk);
    mk.memory = def;
    OK(API->PJRT_Memory_Kind(&mk));
    assert_pjrt_string(mk.kind, mk.kind_size);
    ARGS(PJRT_Memory_Kind_Id_Args, mki);
    mki.memory = def;
    OK(API->PJRT_Memory_Kind_Id(&mki));
    ARGS(PJRT_Memory_Id_Args, mid);
    mid.memory = def;
    OK(API->PJRT_Memory_Id(&mid));
    ARGS(PJRT_Memory_DebugString_Args, mds);
    mds.memory = def;
    OK(API->PJRT_Memory_DebugString(&mds));
    assert_pjrt_string(mds.debug_string, mds.debug_string_size);
    ARGS(PJRT_Memory_ToString_Args, mts);
    mts.memory = def;
    OK(API->PJRT_Memory_ToString(&mts));
    assert_pjrt_string(mts.to_string, mts.to_string_size);
    ARGS(PJRT_Memory_AddressableByDevices_Args, mbd);
    mbd.memory = def;
    OK(API->PJRT_Memory_AddressableByDevices(&mbd));
    found = false;
    for (size_t k = 0; k < mbd.num_devices; k++) found |= mbd.devices[k] == d[i];
    assert_true(found);
    /* the client's memories include it */
    ARGS(PJRT_Client_AddressableMemories_Args, cm);
    cm.client = c;
    OK(API->PJRT_Client_AddressableMemories(&cm));
    found = false;
    for (size_t k = 0; k < cm.num_addressable_memories; k++)
      found |= cm.addressable_memories[k] == def;
    assert_true(found);

    /* MemoryStats is optional; when given, the in-use count is sane */
    ARGS(PJRT_Device_MemoryStats_Args, ms);
    ms.device = d[i];
    if (OK_OR_UNIMPL(API->PJRT_Device_MemoryStats(&ms),
                     "PJRT_Device_MemoryStats"))
      assert_true(ms.bytes_in_use >= 0);
  }
  /* distinct default memories, one per device */
  for (int i = 0; i < NDEV; i++)
    for (int j = 0; j < i; j++)
      assert_ptr_not_equal(default_memory(d[i]), default_memory(d[j]));

  /* an id no device has */
  ARGS(PJRT_Client_LookupDevice_Args, bad);
  bad.client = c;
  bad.id = 1000;
  EXPECT_ERR2(API->PJRT_Client_LookupDevice(&bad),
              PJRT_Error_Code_INVALID_ARGUMENT, PJRT_Error_Code_NOT_FOUND,
              NULL);

  /* the default assignment of 4 replicas, when implemented: 4 devices */
  int assign[NDEV + 1];
  ARGS(PJRT_Client_DefaultDeviceAssignment_Args, dda);
  dda.client = c;
  dda.num_replicas = NDEV;
  dda.num_partitions = 1;
  dda.default_assignment_size = NDEV;
  dda.default_assignment = assign;
  if (OK_OR_UNIMPL(API->PJRT_Client_DefaultDeviceAssignment(&dda),
                   "PJRT_Client_DefaultDeviceAssignment"))
    for (int i = 0; i < NDEV; i++) {
      bool known = false;
      for (int j = 0; j < NDEV; j++) known |= assign[i] == ids[j];
      assert_true(known);
      for (int j = 0; j < i; j++) assert_int_not_equal(assign[i], assign[j]);
    }

  /* the topology, when given, describes the same 4 devices */
  ARGS(PJRT_Client_TopologyDescription_Args, td);
  td.client = c;
  if (OK_OR_UNIMPL(API->PJRT_Client_TopologyDescription(&td),
                   "PJRT_Client_TopologyDescription")) {
    assert_non_null(td.topology);
    ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args, gd);
    gd.topology = td.topology;
    if (OK_OR_UNIMPL(API->PJRT_TopologyDescription_GetDeviceDescriptions(&gd),
                     "PJRT_TopologyDescription_GetDeviceDescriptions"))
      assert_int_equal(gd.num_descriptions, NDEV);
    ARGS(PJRT_TopologyDescription_PlatformName_Args, tpn);
    tpn.topology = td.topology;
    if (OK_OR_UNIMPL(API->PJRT_TopologyDescription_PlatformName(&tpn),
                     "PJRT_TopologyDescription_PlatformName"))
      assert_string_equal(
          str_of(tpn.platform_name, tpn.platform_name_size, sb, sizeof sb),
          str_of(pn.platform_name, pn.platform_name_size, sb + 128, 128));
  }
  client_destroy(c);

  /* other device counts; the default one is at least 1 */
  static const int64_t counts[] = {1, 8};
  for (size_t k = 0; k < COUNT(counts); k++) {
    c = new_client(counts[k]);
    PJRT_Device *dv[8];
    get_devices(c, dv, (size_t)counts[k]);
    client_destroy(c);
  }
  c = new_client(0);
  ARGS(PJRT_Client_AddressableDevices_Args, ad);
  ad.client = c;
  OK(API->PJRT_Client_AddressableDevices(&ad));
  assert_true(ad.num_addressable_devices >= 1);
  client_destroy(c);
}

/* ======================================================================
 * 4. Buffers from and to the host
 * ==================================================================== */

/* One buffer round trip: the host copy is overwritten once
 * done_with_host_buffer says so; the device keeps the original. */
static void round_trip(PJRT_Client *c, PJRT_Device *d, PJRT_Buffer_Type t,
                       const void *want, const int64_t *dims, size_t nd,
                       PJRT_HostBufferSemantics sem) {
  size_t elems = 1;
  for (size_t i = 0; i < nd; i++) elems *= (size_t)dims[i];
  size_t bytes = elems * type_bytes(t);
  unsigned char *host = malloc(bytes ? bytes : 1), *back = malloc(bytes + 8);
  assert_non_null(host);
  assert_non_null(back);
  memcpy(host, want, bytes);

  PJRT_Event *done = NULL;
  PJRT_Buffer *b = NULL;
  OK(from_host(c, d, t, host, dims, nd, sem, &done, &b));
  assert_non_null(b);
  assert_non_null(done);
  if (sem == PJRT_HostBufferSemantics_kImmutableOnlyDuringCall) {
    memset(host, 0xA5, bytes); /* free to reuse as soon as the call returns */
    await_ok(done);
    done = NULL;
  } else if (sem ==
             PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes) {
    await_ok(done);
    done = NULL;
    memset(host, 0xA5, bytes);
  } /* zero copy: the host data stays untouched until the buffer is gone */

  check_buffer_shape(b, t, dims, nd);
  ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args, sz);
  sz.buffer = b;
  OK(API->PJRT_Buffer_OnDeviceSizeInBytes(&sz));
  assert_true(sz.on_device_size_in_bytes >= bytes);
  assert_ptr_equal(buffer_device(b), d);
  ARGS(PJRT_Buffer_Memory_Args, mem);
  mem.buffer = b;
  OK(API->PJRT_Buffer_Memory(&mem));
  assert_ptr_equal(mem.memory, default_memory(d));
  ARGS(PJRT_Buffer_IsDeleted_Args, del);
  del.buffer = b;
  del.is_deleted = true;
  OK(API->PJRT_Buffer_IsDeleted(&del));
  assert_false(del.is_deleted);
  ARGS(PJRT_Buffer_IsOnCpu_Args, cpu);
  cpu.buffer = b;
  OK(API->PJRT_Buffer_IsOnCpu(&cpu));
  ARGS(PJRT_Buffer_ReadyEvent_Args, ready);
  ready.buffer = b;
  OK(API->PJRT_Buffer_ReadyEvent(&ready));
  await_ok(ready.event);

  memset(back, 0x5A, bytes + 8);
  download(b, back, bytes);
  assert_memory_equal(back, want, bytes);
  for (size_t i = bytes; i < bytes + 8; i++) assert_int_equal(back[i], 0x5A);

  buffer_destroy(b);
  if (done) await_ok(done); /* zero copy: done once the buffer is freed */
  free(host);
  free(back);
}

static void test_buffers(void **state) {
  (void)state;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  get_devices(c, d, NDEV);

  float f32[2][3];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) f32[i][j] = (float)(i * 10 + j) - 2.5f;
  const int64_t d23[2] = {2, 3};
  int32_t s32[5] = {-7, 0, 1, 2147483647, -2147483647 - 1};
  const int64_t d5[1] = {5};
  double f64[4] = {1e300, -0.0, 3.25, -1.5e-300};
  const int64_t d4[1] = {4};
  int8_t s8[2][2][2] = {{{-128, 127}, {0, 1}}, {{2, -3}, {4, -5}}};
  const int64_t d222[3] = {2, 2, 2};
  uint8_t u8[3] = {0, 200, 255};
  const int64_t d3[1] = {3};
  bool pred[4] = {true, false, false, true};
  int64_t s64[2] = {INT64_MIN, 1234567890123LL};
  const int64_t d2[1] = {2};
  uint16_t bf16[2] = {0x3f80, 0xc000}; /* 1.0, -2.0 */
  float scalar = 42.5f;
  const int64_t d0x3[2] = {0, 3};

  const PJRT_HostBufferSemantics sems[3] = {
      PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
      PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
      PJRT_HostBufferSemantics_kImmutableZeroCopy};
  for (int s = 0; s < 3; s++) {
    PJRT_Device *dv = d[s % NDEV];
    round_trip(c, dv, PJRT_Buffer_Type_F32, f32, d23, 2, sems[s]);
    round_trip(c, dv, PJRT_Buffer_Type_S32, s32, d5, 1, sems[s]);
  }
  round_trip(c, d[1], PJRT_Buffer_Type_F64, f64, d4, 1, sems[1]);
  round_trip(c, d[2], PJRT_Buffer_Type_S8, s8, d222, 3, sems[1]);
  round_trip(c, d[3], PJRT_Buffer_Type_U8, u8, d3, 1, sems[1]);
  round_trip(c, d[0], PJRT_Buffer_Type_PRED, pred, d4, 1, sems[1]);
  round_trip(c, d[1], PJRT_Buffer_Type_S64, s64, d2, 1, sems[1]);
  round_trip(c, d[2], PJRT_Buffer_Type_BF16, bf16, d2, 1, sems[1]);
  round_trip(c, d[3], PJRT_Buffer_Type_F32, &scalar, NULL, 0, sems[1]);
  round_trip(c, d[0], PJRT_Buffer_Type_F32, f32, d0x3, 2, sems[1]);

  /* dense byte strides as numpy gives them must be taken */
  {
    const int64_t strides[2] = {3 * 4, 4};
    ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
    a.client = c;
    a.data = f32;
    a.type = PJRT_Buffer_Type_F32;
    a.dims = d23;
    a.num_dims = 2;
    a.byte_strides = strides;
    a.num_byte_strides = 2;
    a.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
    a.device = d[1];
    OK(API->PJRT_Client_BufferFromHostBuffer(&a));
    await_ok(a.done_with_host_buffer);
    float back[2][3];
    download(a.buffer, back, sizeof back);
    assert_memory_equal(back, f32, sizeof back);
    buffer_destroy(a.buffer);
  }
  /* a transposed (column-major) host array: taken and laid out logically,
   * or refused as UNIMPLEMENTED */
  {
    float colmajor[6]; /* element (i, j) at j * 2 + i */
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) colmajor[j * 2 + i] = f32[i][j];
    const int64_t strides[2] = {4, 2 * 4};
    ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
    a.client = c;
    a.data = colmajor;
    a.type = PJRT_Buffer_Type_F32;
    a.dims = d23;
    a.num_dims = 2;
    a.byte_strides = strides;
    a.num_byte_strides = 2;
    a.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
    a.device = d[2];
    if (OK_OR_UNIMPL(API->PJRT_Client_BufferFromHostBuffer(&a),
                     "PJRT_Client_BufferFromHostBuffer")) {
      await_ok(a.done_with_host_buffer);
      float back[2][3];
      download(a.buffer, back, sizeof back);
      assert_memory_equal(back, f32, sizeof back);
      buffer_destroy(a.buffer);
    }
  }
  /* to a memory instead of a device */
  {
    ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
    a.client = c;
    a.data = s32;
    a.type = PJRT_Buffer_Type_S32;
    a.dims = d5;
    a.num_dims = 1;
    a.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
    a.memory = default_memory(d[3]);
    OK(API->PJRT_Client_BufferFromHostBuffer(&a));
    await_ok(a.done_with_host_buffer);
    assert_ptr_equal(buffer_device(a.buffer), d[3]);
    int32_t back[5];
    download(a.buffer, back, sizeof back);
    assert_memory_equal(back, s32, sizeof back);
    buffer_destroy(a.buffer);
  }
  /* ToHostBuffer into too small a destination */
  {
    PJRT_Buffer *b = upload(c, d[0], PJRT_Buffer_Type_S32, s32, d5, 1);
    int32_t small[4];
    ARGS(PJRT_Buffer_ToHostBuffer_Args, a);
    a.src = b;
    a.dst = small;
    a.dst_size = sizeof small;
    EXPECT_ERR(API->PJRT_Buffer_ToHostBuffer(&a),
               PJRT_Error_Code_INVALID_ARGUMENT, NULL);
    buffer_destroy(b);
  }
  client_destroy(c);
}

/* Event_OnReady: the callback runs once, with no error, and owns it. */
typedef struct on_ready_state {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int calls;
  bool had_error;
} on_ready_state;

static void on_ready_cb(PJRT_Error *error, void *user_arg) {
  on_ready_state *s = user_arg;
  if (error) err_destroy(error);
  pthread_mutex_lock(&s->mu);
  s->calls++;
  s->had_error |= error != NULL;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void test_event_on_ready(void **state) {
  (void)state;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  get_devices(c, d, NDEV);
  float x[4] = {1, 2, 3, 4};
  const int64_t d4[1] = {4};
  on_ready_state s;
  pthread_mutex_init(&s.mu, NULL);
  pthread_cond_init(&s.cv, NULL);
  s.calls = 0;
  s.had_error = false;

  /* on the host-buffer event (JAX frees the numpy array from it) and on a
   * buffer's ready event */
  PJRT_Event *done = NULL;
  PJRT_Buffer *b = NULL;
  OK(from_host(c, d[1], PJRT_Buffer_Type_F32, x, d4, 1,
               PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
               &done, &b));
  ARGS(PJRT_Event_OnReady_Args, o);
  o.event = done;
  o.callback = on_ready_cb;
  o.user_arg = &s;
  OK(API->PJRT_Event_OnReady(&o));
  ARGS(PJRT_Buffer_ReadyEvent_Args, r);
  r.buffer = b;
  OK(API->PJRT_Buffer_ReadyEvent(&r));
  o.event = r.event;
  OK(API->PJRT_Event_OnReady(&o));
  pthread_mutex_lock(&s.mu);
  while (s.calls < 2) pthread_cond_wait(&s.cv, &s.mu);
  pthread_mutex_unlock(&s.mu);
  assert_int_equal(s.calls, 2);
  assert_false(s.had_error);
  event_destroy(done);
  event_destroy(r.event);
  buffer_destroy(b);
  pthread_cond_destroy(&s.cv);
  pthread_mutex_destroy(&s.mu);
  client_destroy(c);
}

/* ======================================================================
 * 5. Compile and execute on one device
 * ==================================================================== */

static void check_add_metadata(PJRT_LoadedExecutable *x) {
  PJRT_Executable *e = get_executable(x);
  ARGS(PJRT_Executable_Name_Args, nm);
  nm.executable = e;
  OK(API->PJRT_Executable_Name(&nm));
  assert_pjrt_string(nm.executable_name, nm.executable_name_size);
  ARGS(PJRT_Executable_NumReplicas_Args, nr);
  nr.executable = e;
  OK(API->PJRT_Executable_NumReplicas(&nr));
  assert_int_equal(nr.num_replicas, 1);
  ARGS(PJRT_Executable_NumPartitions_Args, np);
  np.executable = e;
  OK(API->PJRT_Executable_NumPartitions(&np));
  assert_int_equal(np.num_partitions, 1);
  ARGS(PJRT_Executable_NumOutputs_Args, no);
  no.executable = e;
  OK(API->PJRT_Executable_NumOutputs(&no));
  assert_int_equal(no.num_outputs, 1);
  ARGS(PJRT_Executable_OutputElementTypes_Args, ot);
  ot.executable = e;
  OK(API->PJRT_Executable_OutputElementTypes(&ot));
  assert_int_equal(ot.num_output_types, 1);
  assert_int_equal(ot.output_types[0], PJRT_Buffer_Type_F32);
  ARGS(PJRT_Executable_OutputDimensions_Args, od);
  od.executable = e;
  OK(API->PJRT_Executable_OutputDimensions(&od));
  assert_int_equal(od.num_outputs, 1);
  assert_int_equal(od.dim_sizes[0], 1);
  assert_int_equal(od.dims[0], 4);
  ARGS(PJRT_Executable_OutputMemoryKinds_Args, mk);
  mk.executable = e;
  if (OK_OR_UNIMPL(API->PJRT_Executable_OutputMemoryKinds(&mk),
                   "PJRT_Executable_OutputMemoryKinds")) {
    assert_int_equal(mk.num_outputs, 1);
    assert_pjrt_string(mk.memory_kinds[0], mk.memory_kind_sizes[0]);
  }
  ARGS(PJRT_Executable_Fingerprint_Args, fp);
  fp.executable = e;
  if (OK_OR_UNIMPL(API->PJRT_Executable_Fingerprint(&fp),
                   "PJRT_Executable_Fingerprint") &&
      fp.executable_fingerprint_size)
    assert_non_null(fp.executable_fingerprint);
  ARGS(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, gc);
  gc.executable = e;
  if (OK_OR_UNIMPL(API->PJRT_Executable_SizeOfGeneratedCodeInBytes(&gc),
                   "PJRT_Executable_SizeOfGeneratedCodeInBytes"))
    assert_true(gc.size_in_bytes >= 0);
  ARGS(PJRT_Executable_GetCostAnalysis_Args, ca);
  ca.executable = e;
  if (OK_OR_UNIMPL(API->PJRT_Executable_GetCostAnalysis(&ca),
                   "PJRT_Executable_GetCostAnalysis"))
    for (size_t i = 0; i < ca.num_properties; i++)
      check_named_value(&ca.properties[i]);
  ARGS(PJRT_Executable_GetCompiledMemoryStats_Args, cm);
  cm.executable = e;
  OK_OR_UNIMPL(API->PJRT_Executable_GetCompiledMemoryStats(&cm),
               "PJRT_Executable_GetCompiledMemoryStats");
  executable_destroy(e);

  ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
  ad.executable = x;
  OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
  assert_int_equal(ad.num_addressable_devices, 1);
  assert_non_null(ad.addressable_devices[0]);
}

static void test_compile_execute_add(void **state) {
  (void)state;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  get_devices(c, d, NDEV);
  const int64_t d4[1] = {4};

  /* empty compile options: the defaults (one replica, one partition) */
  PJRT_LoadedExecutable *x = compile_ok(c, k_add, NULL, 0);
  check_add_metadata(x);
  ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
  ad.executable = x;
  OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
  PJRT_Device *dev = ad.addressable_devices[0];

  for (int round = 0; round < 3; round++) {
    float a[4], b[4], want[4], got[4];
    for (int i = 0; i < 4; i++) {
      a[i] = (float)(i + round) * 1.5f;
      b[i] = 100.0f - (float)(i * i) - (float)round;
      want[i] = a[i] + b[i];
    }
    PJRT_Buffer *args[2] = {
        upload(c, dev, PJRT_Buffer_Type_F32, a, d4, 1),
        upload(c, dev, PJRT_Buffer_Type_F32, b, d4, 1)};
    PJRT_Buffer *out[1];
    execute_ok(x, 1, 2, args, 1, out);
    check_buffer_shape(out[0], PJRT_Buffer_Type_F32, d4, 1);
    assert_ptr_equal(buffer_device(out[0]), dev);
    download(out[0], got, sizeof got);
    assert_memory_equal(got, want, sizeof want);
    /* the inputs are not donated: still readable */
    download(args[0], got, sizeof got);
    assert_memory_equal(got, a, sizeof a);
    buffer_destroy(out[0]);
    buffer_destroy(args[0]);
    buffer_destroy(args[1]);
  }

  /* execute_device: on another device, or UNIMPLEMENTED */
  {
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, got[4];
    const float want[4] = {11, 22, 33, 44};
    PJRT_Device *other = dev == d[2] ? d[3] : d[2];
    PJRT_Buffer *args[2] = {
        upload(c, other, PJRT_Buffer_Type_F32, a, d4, 1),
        upload(c, other, PJRT_Buffer_Type_F32, b, d4, 1)};
    PJRT_Buffer *out[1];
    PJRT_Event *ev[1];
    if (OK_OR_UNIMPL(execute(x, 1, 2, args, 1, out, ev, other),
                     "PJRT_LoadedExecutable_Execute")) {
      await_ok(ev[0]);
      assert_ptr_equal(buffer_device(out[0]), other);
      download(out[0], got, sizeof got);
      assert_memory_equal(got, want, sizeof want);
      buffer_destroy(out[0]);
    }
    buffer_destroy(args[0]);
    buffer_destroy(args[1]);
  }

  /* without completion events (JAX may pass NULL): outputs still ready */
  {
    float a[4] = {0.5f, 0.25f, -1, 8}, got[4];
    const float want[4] = {1, 0.5f, -2, 16};
    PJRT_Buffer *in = upload(c, dev, PJRT_Buffer_Type_F32, a, d4, 1);
    PJRT_Buffer *args[2] = {in, in}, *out[1];
    OK(execute(x, 1, 2, args, 1, out, NULL, NULL));
    ARGS(PJRT_Buffer_ReadyEvent_Args, r);
    r.buffer = out[0];
    OK(API->PJRT_Buffer_ReadyEvent(&r));
    await_ok(r.event);
    download(out[0], got, sizeof got);
    assert_memory_equal(got, want, sizeof want);
    buffer_destroy(out[0]);
    buffer_destroy(in);
  }

  /* LoadedExecutable_Delete, then IsDeleted, then Destroy */
  ARGS(PJRT_LoadedExecutable_IsDeleted_Args, isd);
  isd.executable = x;
  OK(API->PJRT_LoadedExecutable_IsDeleted(&isd));
  assert_false(isd.is_deleted);
  ARGS(PJRT_LoadedExecutable_Delete_Args, del);
  del.executable = x;
  OK(API->PJRT_LoadedExecutable_Delete(&del));
  isd.is_deleted = false;
  OK(API->PJRT_LoadedExecutable_IsDeleted(&isd));
  assert_true(isd.is_deleted);
  loaded_destroy(x);

  /* the JAX form: a module with attributes and a public main */
  x = compile_ok(c,
                 "module @jit_f attributes {mhlo.num_partitions = 1 : i32, "
                 "mhlo.num_replicas = 1 : i32} {\n"
                 "  func.func public @main(%arg0: tensor<4xf32>, %arg1: "
                 "tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = \"\"}) "
                 "{\n"
                 "    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>\n"
                 "    return %0 : tensor<4xf32>\n"
                 "  }\n"
                 "}\n",
                 NULL, 0);
  check_add_metadata(x);
  loaded_destroy(x);
  client_destroy(c);
}

/* ======================================================================
 * 6. Compile options as JAX sends them; replicated execution
 * ==================================================================== */

/* The device of each replica: ids[r] for the assignment given. */
static void run_allreduce(PJRT_Client *c, PJRT_Device **d, const int *ids,
                          const int *order, const char *program,
                          int with_replica_id) {
  int64_t da[NDEV];
  for (int r = 0; r < NDEV; r++) da[r] = ids[order[r]];
  pb_buf opts;
  pb_compile_options(&opts, NDEV, 1, da);
  assert_true(opts.ok);
  PJRT_LoadedExecutable *x = compile_ok(c, program, opts.b, opts.n);

  PJRT_Executable *e = get_executable(x);
  ARGS(PJRT_Executable_NumReplicas_Args, nr);
  nr.executable = e;
  OK(API->PJRT_Executable_NumReplicas(&nr));
  assert_int_equal(nr.num_replicas, NDEV);
  ARGS(PJRT_Executable_NumPartitions_Args, np);
  np.executable = e;
  OK(API->PJRT_Executable_NumPartitions(&np));
  assert_int_equal(np.num_partitions, 1);
  size_t nout = with_replica_id ? 2 : 1;
  ARGS(PJRT_Executable_NumOutputs_Args, no);
  no.executable = e;
  OK(API->PJRT_Executable_NumOutputs(&no));
  assert_int_equal(no.num_outputs, nout);
  ARGS(PJRT_Executable_OutputElementTypes_Args, ot);
  ot.executable = e;
  OK(API->PJRT_Executable_OutputElementTypes(&ot));
  assert_int_equal(ot.num_output_types, nout);
  assert_int_equal(ot.output_types[0], PJRT_Buffer_Type_F32);
  if (with_replica_id) assert_int_equal(ot.output_types[1], PJRT_Buffer_Type_U32);
  ARGS(PJRT_Executable_OutputDimensions_Args, od);
  od.executable = e;
  OK(API->PJRT_Executable_OutputDimensions(&od));
  assert_int_equal(od.num_outputs, nout);
  assert_int_equal(od.dim_sizes[0], 1);
  assert_int_equal(od.dims[0], 4);
  if (with_replica_id) assert_int_equal(od.dim_sizes[1], 0);
  executable_destroy(e);

  /* the executable's devices, in replica order: those of the assignment */
  ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
  ad.executable = x;
  OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
  assert_int_equal(ad.num_addressable_devices, NDEV);
  for (int r = 0; r < NDEV; r++)
    assert_ptr_equal(ad.addressable_devices[r], d[order[r]]);

  /* replica r gets in[r] on its device; each output is the sum */
  const int64_t d4[1] = {4};
  float in[NDEV][4], want[4] = {0, 0, 0, 0};
  PJRT_Buffer *args[NDEV], *outs[NDEV * 2];
  for (int r = 0; r < NDEV; r++) {
    for (int i = 0; i < 4; i++) {
      in[r][i] = (float)(r + 1) * 10.0f + (float)i * 0.5f;
      want[i] += in[r][i];
    }
    args[r] = upload(c, d[order[r]], PJRT_Buffer_Type_F32, in[r], d4, 1);
  }
  PJRT_Event *evs[NDEV];
  OK(execute(x, NDEV, 1, args, nout, outs, evs, NULL));
  for (int r = 0; r < NDEV; r++) {
    assert_non_null(evs[r]);
    await_ok(evs[r]);
  }
  for (int r = 0; r < NDEV; r++) {
    PJRT_Buffer *o = outs[(size_t)r * nout];
    assert_non_null(o);
    check_buffer_shape(o, PJRT_Buffer_Type_F32, d4, 1);
    assert_ptr_equal(buffer_device(o), d[order[r]]);
    float got[4];
    download(o, got, sizeof got);
    for (int i = 0; i < 4; i++)
      if (got[i] != want[i])
        fail_msg("replica %d [%d]: %g, want %g", r, i, (double)got[i],
                 (double)want[i]);
    if (with_replica_id) {
      PJRT_Buffer *rid = outs[(size_t)r * nout + 1];
      check_buffer_shape(rid, PJRT_Buffer_Type_U32, NULL, 0);
      uint32_t id = 99;
      download(rid, &id, sizeof id);
      assert_int_equal(id, r);
    }
  }
  for (size_t i = 0; i < NDEV * nout; i++) buffer_destroy(outs[i]);
  for (int r = 0; r < NDEV; r++) buffer_destroy(args[r]);
  loaded_destroy(x);
}

static void test_replicated_all_reduce(void **state) {
  (void)state;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  get_devices(c, d, NDEV);
  int ids[NDEV];
  for (int i = 0; i < NDEV; i++) ids[i] = device_id(d[i]);

  static const int identity[NDEV] = {0, 1, 2, 3};
  static const int reversed[NDEV] = {3, 2, 1, 0};
  run_allreduce(c, d, ids, identity, k_allreduce, 1);
  run_allreduce(c, d, ids, reversed, k_allreduce, 1);
  run_allreduce(c, d, ids, identity, k_allreduce_jax, 0);

  /* one replica placed by the options on the third device, as JAX
   * compiles for jax.device_put(x, devices[2]) */
  {
    int64_t one[1] = {ids[2]};
    pb_buf opts;
    pb_compile_options(&opts, 1, 1, one);
    PJRT_LoadedExecutable *x = compile_ok(c, k_add, opts.b, opts.n);
    ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
    ad.executable = x;
    OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
    assert_int_equal(ad.num_addressable_devices, 1);
    assert_ptr_equal(ad.addressable_devices[0], d[2]);
    const int64_t d4[1] = {4};
    float a[4] = {1, 2, 3, 4}, got[4];
    const float want[4] = {2, 4, 6, 8};
    PJRT_Buffer *in = upload(c, d[2], PJRT_Buffer_Type_F32, a, d4, 1);
    PJRT_Buffer *args[2] = {in, in}, *out[1];
    execute_ok(x, 1, 2, args, 1, out);
    assert_ptr_equal(buffer_device(out[0]), d[2]);
    download(out[0], got, sizeof got);
    assert_memory_equal(got, want, sizeof want);
    buffer_destroy(out[0]);
    buffer_destroy(in);
    loaded_destroy(x);
  }
  /* the options without a device assignment: 4 replicas on 4 devices */
  {
    pb_buf opts;
    pb_compile_options(&opts, NDEV, 1, NULL);
    PJRT_LoadedExecutable *x = compile_ok(c, k_allreduce, opts.b, opts.n);
    ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
    ad.executable = x;
    OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
    assert_int_equal(ad.num_addressable_devices, NDEV);
    for (int r = 0; r < NDEV; r++)
      for (int q = 0; q < r; q++)
        assert_ptr_not_equal(ad.addressable_devices[r],
                             ad.addressable_devices[q]);
    loaded_destroy(x);
  }
  /* an unpacked replica_device_ids list is the same assignment */
  {
    int64_t da[NDEV] = {ids[0], ids[1], ids[2], ids[3]};
    pb_buf dap, ebo, opts;
    pb_device_assignment(&dap, NDEV, 1, da, 0);
    pb_init(&ebo);
    pb_int(&ebo, 4, NDEV);
    pb_int(&ebo, 5, 1);
    pb_msg(&ebo, 9, &dap);
    pb_init(&opts);
    pb_msg(&opts, 3, &ebo);
    PJRT_LoadedExecutable *x = compile_ok(c, k_allreduce, opts.b, opts.n);
    ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
    ad.executable = x;
    OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
    assert_int_equal(ad.num_addressable_devices, NDEV);
    for (int r = 0; r < NDEV; r++)
      assert_ptr_equal(ad.addressable_devices[r], d[r]);
    loaded_destroy(x);
  }
  client_destroy(c);
}

/* ======================================================================
 * 7. Copies between devices, delete, errors of the plugin
 * ==================================================================== */

static void test_copy_and_delete(void **state) {
  (void)state;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  get_devices(c, d, NDEV);
  const int64_t d23[2] = {2, 3};
  const int32_t v[2][3] = {{1, -2, 3}, {-4, 5, -6}};
  PJRT_Buffer *b0 = upload(c, d[0], PJRT_Buffer_Type_S32, v, d23, 2);

  ARGS(PJRT_Buffer_CopyToDevice_Args, cp);
  cp.buffer = b0;
  cp.dst_device = d[3];
  OK(API->PJRT_Buffer_CopyToDevice(&cp));
  PJRT_Buffer *b3 = cp.dst_buffer;
  assert_non_null(b3);
  assert_ptr_equal(buffer_device(b3), d[3]);
  check_buffer_shape(b3, PJRT_Buffer_Type_S32, d23, 2);
  int32_t got[2][3];
  download(b3, got, sizeof got);
  assert_memory_equal(got, v, sizeof v);
  /* and back to another device */
  ARGS(PJRT_Buffer_CopyToDevice_Args, back);
  back.buffer = b3;
  back.dst_device = d[1];
  OK(API->PJRT_Buffer_CopyToDevice(&back));
  assert_ptr_equal(buffer_device(back.dst_buffer), d[1]);
  memset(got, 0, sizeof got);
  download(back.dst_buffer, got, sizeof got);
  assert_memory_equal(got, v, sizeof v);
  buffer_destroy(back.dst_buffer);

  /* CopyToMemory to another device's memory, when implemented */
  ARGS(PJRT_Buffer_CopyToMemory_Args, cm);
  cm.buffer = b0;
  cm.dst_memory = default_memory(d[2]);
  if (OK_OR_UNIMPL(API->PJRT_Buffer_CopyToMemory(&cm),
                   "PJRT_Buffer_CopyToMemory")) {
    assert_ptr_equal(buffer_device(cm.dst_buffer), d[2]);
    memset(got, 0, sizeof got);
    download(cm.dst_buffer, got, sizeof got);
    assert_memory_equal(got, v, sizeof v);
    buffer_destroy(cm.dst_buffer);
  }

  /* Delete: the buffer object stays, reports deleted, refuses reads */
  ARGS(PJRT_Buffer_Delete_Args, del);
  del.buffer = b3;
  OK(API->PJRT_Buffer_Delete(&del));
  ARGS(PJRT_Buffer_IsDeleted_Args, isd);
  isd.buffer = b3;
  OK(API->PJRT_Buffer_IsDeleted(&isd));
  assert_true(isd.is_deleted);
  ARGS(PJRT_Buffer_IsDeleted_Args, isd0);
  isd0.buffer = b0;
  isd0.is_deleted = true;
  OK(API->PJRT_Buffer_IsDeleted(&isd0));
  assert_false(isd0.is_deleted); /* the source of the copy lives on */
  ARGS(PJRT_Buffer_ToHostBuffer_Args, th);
  th.src = b3;
  th.dst = got;
  th.dst_size = sizeof got;
  PJRT_Error *e = API->PJRT_Buffer_ToHostBuffer(&th);
  if (!e) { /* or an event carrying the error */
    assert_non_null(th.event);
    ARGS(PJRT_Event_Await_Args, w);
    w.event = th.event;
    e = API->PJRT_Event_Await(&w);
    event_destroy(th.event);
  }
  EXPECT_ERR2(e, PJRT_Error_Code_INVALID_ARGUMENT,
              PJRT_Error_Code_FAILED_PRECONDITION, NULL);
  /* a deleted buffer's ready event is an error at once */
  ARGS(PJRT_Buffer_ReadyEvent_Args, re);
  re.buffer = b3;
  e = API->PJRT_Buffer_ReadyEvent(&re);
  if (!e) {
    ARGS(PJRT_Event_Await_Args, w);
    w.event = re.event;
    e = API->PJRT_Event_Await(&w);
    event_destroy(re.event);
  }
  EXPECT_ERR2(e, PJRT_Error_Code_INVALID_ARGUMENT,
              PJRT_Error_Code_FAILED_PRECONDITION, NULL);
  /* a deleted buffer as an Execute argument */
  {
    const int64_t d4[1] = {4};
    float x4[4] = {1, 2, 3, 4};
    PJRT_LoadedExecutable *x = compile_ok(c, k_add, NULL, 0);
    ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
    ad.executable = x;
    OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
    PJRT_Buffer *in = upload(c, ad.addressable_devices[0],
                             PJRT_Buffer_Type_F32, x4, d4, 1);
    PJRT_Buffer *gone = upload(c, ad.addressable_devices[0],
                               PJRT_Buffer_Type_F32, x4, d4, 1);
    ARGS(PJRT_Buffer_Delete_Args, dg);
    dg.buffer = gone;
    OK(API->PJRT_Buffer_Delete(&dg));
    PJRT_Buffer *args[2] = {in, gone}, *out[1];
    PJRT_Event *ev[1];
    EXPECT_ERR2(execute(x, 1, 2, args, 1, out, ev, NULL),
                PJRT_Error_Code_INVALID_ARGUMENT,
                PJRT_Error_Code_FAILED_PRECONDITION, NULL);
    assert_null(out[0]);
    assert_null(ev[0]);
    buffer_destroy(gone);
    buffer_destroy(in);
    loaded_destroy(x);
  }
  buffer_destroy(b3);
  buffer_destroy(b0);
  client_destroy(c);
}

static void test_plugin_errors(void **state) {
  (void)state;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  get_devices(c, d, NDEV);
  int64_t ids[NDEV];
  for (int i = 0; i < NDEV; i++) ids[i] = device_id(d[i]);
  PJRT_LoadedExecutable *x = NULL;

  /* a mistake in the program: INVALID_ARGUMENT at its line:col */
  EXPECT_ERR(compile(c, k_bad, "mlir", NULL, 0, &x),
             PJRT_Error_Code_INVALID_ARGUMENT, "2:26");
  assert_null(x);
  /* cut short: the closing brace is missing at the end (line 3, col 1) */
  EXPECT_ERR(compile(c,
                     "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  return %a : tensor<4xf32>\n",
                     "mlir", NULL, 0, &x),
             PJRT_Error_Code_INVALID_ARGUMENT, "3:1");
  /* an operand of the wrong type: the use of %a at line 2, col 22 */
  EXPECT_ERR(compile(c,
                     "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  %0 = stablehlo.add %a, %a : tensor<4xi32>\n"
                     "  return %0 : tensor<4xf32>\n"
                     "}\n",
                     "mlir", NULL, 0, &x),
             PJRT_Error_Code_INVALID_ARGUMENT, "2:22");
  /* formats xrt does not read */
  EXPECT_ERR(compile(c, k_add, "hlo", NULL, 0, &x),
             PJRT_Error_Code_UNIMPLEMENTED, NULL);
  EXPECT_ERR(compile(c, k_add, "hlo_with_config", NULL, 0, &x),
             PJRT_Error_Code_UNIMPLEMENTED, NULL);
  EXPECT_ERR(compile(c, k_add, "bogus", NULL, 0, &x),
             PJRT_Error_Code_UNIMPLEMENTED, NULL);
  assert_null(x);

  /* compile options that are not a CompileOptionsProto */
  static const unsigned char garbage[] = {0x1a, 0x40, 0x20};  /* field 3,
                                      length 64, 1 byte follows */
  EXPECT_ERR(compile(c, k_add, "mlir", garbage, sizeof garbage, &x),
             PJRT_Error_Code_INVALID_ARGUMENT, NULL);
  static const unsigned char badvarint[] = {0x28, 0xff, 0xff, 0xff};
  /* profile_version (5), a varint cut short */
  EXPECT_ERR(compile(c, k_add, "mlir", badvarint, sizeof badvarint, &x),
             PJRT_Error_Code_INVALID_ARGUMENT, NULL);
  /* options the client cannot place: more replicas than devices, an
   * unknown device, a device twice, an assignment of the wrong size */
  {
    pb_buf o;
    pb_compile_options(&o, 8, 1, NULL);
    EXPECT_ERR(compile(c, k_allreduce, "mlir", o.b, o.n, &x),
               PJRT_Error_Code_INVALID_ARGUMENT, NULL);
    const int64_t unknown[NDEV] = {ids[0], ids[1], ids[2], 99};
    pb_compile_options(&o, NDEV, 1, unknown);
    EXPECT_ERR(compile(c, k_allreduce, "mlir", o.b, o.n, &x),
               PJRT_Error_Code_INVALID_ARGUMENT, NULL);
    const int64_t twice[NDEV] = {ids[0], ids[1], ids[1], ids[2]};
    pb_compile_options(&o, NDEV, 1, twice);
    EXPECT_ERR(compile(c, k_allreduce, "mlir", o.b, o.n, &x),
               PJRT_Error_Code_INVALID_ARGUMENT, NULL);
    pb_buf dap, ebo;
    const int64_t three[3] = {ids[0], ids[1], ids[2]};
    pb_device_assignment(&dap, 3, 1, three, 1);
    pb_init(&ebo);
    pb_int(&ebo, 4, NDEV);
    pb_int(&ebo, 5, 1);
    pb_msg(&ebo, 9, &dap);
    pb_init(&o);
    pb_msg(&o, 3, &ebo);
    EXPECT_ERR(compile(c, k_allreduce, "mlir", o.b, o.n, &x),
               PJRT_Error_Code_INVALID_ARGUMENT, NULL);
  }
  assert_null(x);

  /* table entries xrt does not implement: UNIMPLEMENTED naming them */
  ARGS(PJRT_TopologyDescription_Create_Args, tc);
  tc.topology_name = "xrt";
  tc.topology_name_size = 3;
  if (OK_OR_UNIMPL(API->PJRT_TopologyDescription_Create(&tc),
                   "PJRT_TopologyDescription_Create")) {
    ARGS(PJRT_TopologyDescription_Destroy_Args, tdd);
    tdd.topology = tc.topology;
    OK(API->PJRT_TopologyDescription_Destroy(&tdd));
  }
  /* no stream can exist (no recv callbacks): streams are unimplemented */
  ARGS(PJRT_CopyToDeviceStream_TotalBytes_Args, st);
  EXPECT_ERR(API->PJRT_CopyToDeviceStream_TotalBytes(&st),
             PJRT_Error_Code_UNIMPLEMENTED,
             "PJRT_CopyToDeviceStream_TotalBytes");
  ARGS(PJRT_CopyToDeviceStream_GranuleSize_Args, sg);
  EXPECT_ERR(API->PJRT_CopyToDeviceStream_GranuleSize(&sg),
             PJRT_Error_Code_UNIMPLEMENTED,
             "PJRT_CopyToDeviceStream_GranuleSize");
  ARGS(PJRT_CopyToDeviceStream_CurrentBytes_Args, sc);
  EXPECT_ERR(API->PJRT_CopyToDeviceStream_CurrentBytes(&sc),
             PJRT_Error_Code_UNIMPLEMENTED,
             "PJRT_CopyToDeviceStream_CurrentBytes");
  ARGS(PJRT_CopyToDeviceStream_AddChunk_Args, sa);
  EXPECT_ERR(API->PJRT_CopyToDeviceStream_AddChunk(&sa),
             PJRT_Error_Code_UNIMPLEMENTED,
             "PJRT_CopyToDeviceStream_AddChunk");

  /* other optional entries on real objects: done right or UNIMPLEMENTED */
  const int64_t d4[1] = {4};
  float v[4] = {1, 2, 3, 4};
  PJRT_Buffer *b = upload(c, d[0], PJRT_Buffer_Type_F32, v, d4, 1);
  ARGS(PJRT_Buffer_UnpaddedDimensions_Args, ud);
  ud.buffer = b;
  if (OK_OR_UNIMPL(API->PJRT_Buffer_UnpaddedDimensions(&ud),
                   "PJRT_Buffer_UnpaddedDimensions")) {
    assert_int_equal(ud.num_dims, 1);
    assert_int_equal(ud.unpadded_dims[0], 4);
  }
  ARGS(PJRT_Buffer_DynamicDimensionIndices_Args, dd);
  dd.buffer = b;
  if (OK_OR_UNIMPL(API->PJRT_Buffer_DynamicDimensionIndices(&dd),
                   "PJRT_Buffer_DynamicDimensionIndices"))
    assert_int_equal(dd.num_dynamic_dims, 0);
  ARGS(PJRT_Buffer_GetMemoryLayout_Args, ml);
  ml.buffer = b;
  if (OK_OR_UNIMPL(API->PJRT_Buffer_GetMemoryLayout(&ml),
                   "PJRT_Buffer_GetMemoryLayout") &&
      ml.layout.type == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    assert_int_equal(ml.layout.tiled.minor_to_major_size, 1);
    assert_int_equal(ml.layout.tiled.minor_to_major[0], 0);
  }
  ARGS(PJRT_Buffer_UnsafePointer_Args, up);
  up.buffer = b;
  OK_OR_UNIMPL(API->PJRT_Buffer_UnsafePointer(&up),
               "PJRT_Buffer_UnsafePointer");
  ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args, inc);
  inc.buffer = b;
  if (OK_OR_UNIMPL(API->PJRT_Buffer_IncreaseExternalReferenceCount(&inc),
                   "PJRT_Buffer_IncreaseExternalReferenceCount")) {
    ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args, dec);
    dec.buffer = b;
    OK(API->PJRT_Buffer_DecreaseExternalReferenceCount(&dec));
  }
  ARGS(PJRT_Buffer_CopyRawToHost_Args, raw);
  float part[2] = {0, 0};
  raw.buffer = b;
  raw.dst = part;
  raw.offset = 4;
  raw.transfer_size = 8;
  if (OK_OR_UNIMPL(API->PJRT_Buffer_CopyRawToHost(&raw),
                   "PJRT_Buffer_CopyRawToHost")) {
    await_ok(raw.event);
    assert_true(part[0] == 2.0f && part[1] == 3.0f);
  }
  ARGS(PJRT_ExecuteContext_Create_Args, ec);
  if (OK_OR_UNIMPL(API->PJRT_ExecuteContext_Create(&ec),
                   "PJRT_ExecuteContext_Create")) {
    ARGS(PJRT_ExecuteContext_Destroy_Args, ecd);
    ecd.context = ec.context;
    OK(API->PJRT_ExecuteContext_Destroy(&ecd));
  }
  {
    PJRT_ShapeSpec spec;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = PJRT_ShapeSpec_STRUCT_SIZE;
    spec.dims = d4;
    spec.num_dims = 1;
    spec.element_type = PJRT_Buffer_Type_F32;
    ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args, ab);
    ab.client = c;
    ab.shape_specs = &spec;
    ab.num_shape_specs = 1;
    ab.memory = default_memory(d[0]);
    if (OK_OR_UNIMPL(API->PJRT_Client_CreateBuffersForAsyncHostToDevice(&ab),
                     "PJRT_Client_CreateBuffersForAsyncHostToDevice")) {
      ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args, tmd);
      tmd.transfer_manager = ab.transfer_manager;
      OK(API->PJRT_AsyncHostToDeviceTransferManager_Destroy(&tmd));
    }
  }
  /* Serialize and DeserializeAndLoad round trip, when implemented */
  x = compile_ok(c, k_add, NULL, 0);
  PJRT_Executable *e = get_executable(x);
  ARGS(PJRT_Executable_Serialize_Args, ser);
  ser.executable = e;
  if (OK_OR_UNIMPL(API->PJRT_Executable_Serialize(&ser),
                   "PJRT_Executable_Serialize")) {
    assert_non_null(ser.serialized_executable_deleter);
    ARGS(PJRT_Executable_DeserializeAndLoad_Args, dl);
    dl.client = c;
    dl.serialized_executable = ser.serialized_bytes;
    dl.serialized_executable_size = ser.serialized_bytes_size;
    if (OK_OR_UNIMPL(API->PJRT_Executable_DeserializeAndLoad(&dl),
                     "PJRT_Executable_DeserializeAndLoad"))
      loaded_destroy(dl.loaded_executable);
    ser.serialized_executable_deleter(ser.serialized_executable);
  }
  ARGS(PJRT_Executable_OptimizedProgram_Args, op);
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  op.executable = e;
  op.program = &prog;
  if (OK_OR_UNIMPL(API->PJRT_Executable_OptimizedProgram(&op),
                   "PJRT_Executable_OptimizedProgram") &&
      prog.code_size) {
    char *code = malloc(prog.code_size);
    assert_non_null(code);
    prog.code = code;
    OK(API->PJRT_Executable_OptimizedProgram(&op));
    free(code);
  }
  ARGS(PJRT_LoadedExecutable_Fingerprint_Args, lf);
  lf.executable = x;
  OK_OR_UNIMPL(API->PJRT_LoadedExecutable_Fingerprint(&lf),
               "PJRT_LoadedExecutable_Fingerprint");
  executable_destroy(e);
  loaded_destroy(x);

  /* CopyToDevice onto the device the buffer is on: an error (header) */
  ARGS(PJRT_Buffer_CopyToDevice_Args, same);
  same.buffer = b;
  same.dst_device = d[0];
  PJRT_Error *err = API->PJRT_Buffer_CopyToDevice(&same);
  if (!err) buffer_destroy(same.dst_buffer);
  assert_non_null(err);
  err_destroy(err);
  buffer_destroy(b);
  client_destroy(c);
}

/* ======================================================================
 * 8. Bad input from the host
 * ==================================================================== */

/* Client_Create expected to fail: a client it makes anyway is destroyed
 * (so that the failure is reported, not a leak). */
static PJRT_Error *create_or_destroy(PJRT_Client_Create_Args *a) {
  a->client = NULL;
  PJRT_Error *e = API->PJRT_Client_Create(a);
  if (!e && a->client) client_destroy(a->client);
  return e;
}

/* A client of 4 devices with one f32[4] buffer on the first, made before
 * and destroyed after each bad-input test (also when it fails). */
typedef struct host_fixture {
  PJRT_Client *c;
  PJRT_Device *d[NDEV];
  float v[4];
  PJRT_Buffer *b;
} host_fixture;

static int fixture_setup(void **state) {
  static host_fixture f;
  memset(&f, 0, sizeof f);
  const int64_t d4[1] = {4};
  for (int i = 0; i < 4; i++) f.v[i] = (float)(i + 1);
  f.c = new_client(NDEV);
  get_devices(f.c, f.d, NDEV);
  f.b = upload(f.c, f.d[0], PJRT_Buffer_Type_F32, f.v, d4, 1);
  *state = &f;
  return 0;
}

static int fixture_teardown(void **state) {
  host_fixture *f = *state;
  if (f->b) buffer_destroy(f->b);
  if (f->c) client_destroy(f->c);
  return 0;
}

/* struct_size too small: INVALID_ARGUMENT; larger: accepted. */
static void test_bad_struct_size(void **state) {
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  host_fixture *f = *state;
  PJRT_Client *c = f->c;
  PJRT_Device **d = f->d;
  PJRT_Buffer *b = f->b;
  float *v = f->v;
  const int64_t d4[1] = {4};
  /* struct_size too small */
  {
    ARGS(PJRT_Client_PlatformName_Args, a);
    a.client = c;
    a.struct_size = 1;
    EXPECT_ERR(API->PJRT_Client_PlatformName(&a), IA, NULL);
    ARGS(PJRT_Client_Devices_Args, dv);
    dv.client = c;
    dv.struct_size = PJRT_Client_Devices_Args_STRUCT_SIZE - 1;
    EXPECT_ERR(API->PJRT_Client_Devices(&dv), IA, NULL);
    ARGS(PJRT_Plugin_Attributes_Args, at);
    at.struct_size = 1;
    EXPECT_ERR(API->PJRT_Plugin_Attributes(&at), IA, NULL);
    ARGS(PJRT_Buffer_ElementType_Args, et);
    et.buffer = b;
    et.struct_size = 1;
    EXPECT_ERR(API->PJRT_Buffer_ElementType(&et), IA, NULL);
    ARGS(PJRT_Client_Create_Args, cc);
    cc.struct_size = 1;
    EXPECT_ERR(API->PJRT_Client_Create(&cc), IA, NULL);
    assert_null(cc.client);
    ARGS(PJRT_Client_BufferFromHostBuffer_Args, fh);
    fh.struct_size = 1;
    fh.client = c;
    fh.data = v;
    fh.type = PJRT_Buffer_Type_F32;
    fh.dims = d4;
    fh.num_dims = 1;
    fh.device = d[0];
    EXPECT_ERR(API->PJRT_Client_BufferFromHostBuffer(&fh), IA, NULL);
    assert_null(fh.buffer);
    ARGS(PJRT_Buffer_ToHostBuffer_Args, th);
    th.struct_size = 1;
    th.src = b;
    EXPECT_ERR(API->PJRT_Buffer_ToHostBuffer(&th), IA, NULL);
    ARGS(PJRT_Buffer_ReadyEvent_Args, re);
    re.buffer = b;
    OK(API->PJRT_Buffer_ReadyEvent(&re));
    ARGS(PJRT_Event_Await_Args, aw);
    aw.struct_size = 1;
    aw.event = re.event;
    EXPECT_ERR(API->PJRT_Event_Await(&aw), IA, NULL);
    await_ok(re.event);
    /* a PJRT_Program too small inside good Compile args */
    PJRT_Program prog;
    memset(&prog, 0, sizeof prog);
    prog.struct_size = 1;
    char code[256], fmt[4] = {'m', 'l', 'i', 'r'};
    size_t cn = strlen(k_add);
    memcpy(code, k_add, cn);
    prog.code = code;
    prog.code_size = cn;
    prog.format = fmt;
    prog.format_size = 4;
    ARGS(PJRT_Client_Compile_Args, cp);
    cp.client = c;
    cp.program = &prog;
    EXPECT_ERR(API->PJRT_Client_Compile(&cp), IA, NULL);
    assert_null(cp.executable);
    prog.struct_size = PJRT_Program_STRUCT_SIZE;
    cp.struct_size = 1;
    EXPECT_ERR(API->PJRT_Client_Compile(&cp), IA, NULL);
    assert_null(cp.executable);
    /* an error's own GetCode with too small a struct: an error back */
    PJRT_Error *e0 = API->PJRT_Client_PlatformName(NULL);
    assert_non_null(e0);
    ARGS(PJRT_Error_GetCode_Args, gc);
    gc.struct_size = 1;
    gc.error = e0;
    EXPECT_ERR(API->PJRT_Error_GetCode(&gc), IA, NULL);
    err_destroy(e0);
  }
  /* struct_size larger (a newer host): accepted */
  {
    union {
      PJRT_Client_PlatformName_Args a;
      unsigned char pad[sizeof(PJRT_Client_PlatformName_Args) + 32];
    } big;
    memset(&big, 0, sizeof big);
    big.a.struct_size = PJRT_Client_PlatformName_Args_STRUCT_SIZE + 16;
    big.a.client = c;
    OK(API->PJRT_Client_PlatformName(&big.a));
    assert_pjrt_string(big.a.platform_name, big.a.platform_name_size);
  }
}

/* A NULL args pointer: INVALID_ARGUMENT (or nothing, for void calls). */
static void test_null_args(void **state) {
  (void)state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  /* a NULL args pointer */
  EXPECT_ERR(API->PJRT_Plugin_Attributes(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Client_Create(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Client_PlatformName(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Client_Devices(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Client_AddressableDevices(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Client_LookupDevice(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Client_Compile(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Client_BufferFromHostBuffer(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Device_GetDescription(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_DeviceDescription_Id(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Device_DefaultMemory(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Memory_Kind(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Buffer_ElementType(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Buffer_Dimensions(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Buffer_ToHostBuffer(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Buffer_CopyToDevice(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Buffer_Destroy(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_LoadedExecutable_GetExecutable(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Executable_NumOutputs(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Event_Await(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Event_OnReady(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Event_Destroy(NULL), IA, NULL);
  EXPECT_ERR(API->PJRT_Error_GetCode(NULL), IA, NULL);
  API->PJRT_Error_Destroy(NULL); /* void: must simply not crash */
  API->PJRT_Error_Message(NULL);
  {
    ARGS(PJRT_Error_Message_Args, em); /* a NULL error: no crash */
    API->PJRT_Error_Message(&em);
  }
}

/* NULL required fields: INVALID_ARGUMENT. */
static void test_null_fields(void **state) {
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  host_fixture *f = *state;
  PJRT_Client *c = f->c;
  PJRT_Buffer *b = f->b;
  float *v = f->v;
  /* NULL required fields */
  {
    ARGS(PJRT_Client_PlatformName_Args, a);
    EXPECT_ERR(API->PJRT_Client_PlatformName(&a), IA, NULL);
    ARGS(PJRT_Client_LookupDevice_Args, lk);
    EXPECT_ERR(API->PJRT_Client_LookupDevice(&lk), IA, NULL);
    ARGS(PJRT_Device_GetDescription_Args, gd);
    EXPECT_ERR(API->PJRT_Device_GetDescription(&gd), IA, NULL);
    ARGS(PJRT_DeviceDescription_Kind_Args, kd);
    EXPECT_ERR(API->PJRT_DeviceDescription_Kind(&kd), IA, NULL);
    ARGS(PJRT_Memory_Kind_Args, mk);
    EXPECT_ERR(API->PJRT_Memory_Kind(&mk), IA, NULL);
    ARGS(PJRT_Buffer_Device_Args, bd);
    EXPECT_ERR(API->PJRT_Buffer_Device(&bd), IA, NULL);
    ARGS(PJRT_Buffer_ToHostBuffer_Args, th);
    th.dst = v;
    th.dst_size = 4 * sizeof *v;
    EXPECT_ERR(API->PJRT_Buffer_ToHostBuffer(&th), IA, NULL);
    ARGS(PJRT_Buffer_CopyToDevice_Args, cp);
    cp.buffer = b;
    EXPECT_ERR(API->PJRT_Buffer_CopyToDevice(&cp), IA, NULL);
    ARGS(PJRT_Event_Await_Args, aw);
    EXPECT_ERR(API->PJRT_Event_Await(&aw), IA, NULL);
    ARGS(PJRT_Event_IsReady_Args, ir);
    EXPECT_ERR(API->PJRT_Event_IsReady(&ir), IA, NULL);
    ARGS(PJRT_Event_OnReady_Args, orr);
    orr.callback = on_ready_cb;
    EXPECT_ERR(API->PJRT_Event_OnReady(&orr), IA, NULL);
    ARGS(PJRT_Buffer_ReadyEvent_Args, re);
    re.buffer = b;
    OK(API->PJRT_Buffer_ReadyEvent(&re));
    orr.event = re.event; /* an event but no callback */
    orr.callback = NULL;
    EXPECT_ERR(API->PJRT_Event_OnReady(&orr), IA, NULL);
    await_ok(re.event);

    /* compile: no program, no code, no format */
    ARGS(PJRT_Client_Compile_Args, cp2);
    cp2.client = c;
    EXPECT_ERR(API->PJRT_Client_Compile(&cp2), IA, NULL);
    PJRT_Program prog;
    memset(&prog, 0, sizeof prog);
    prog.struct_size = PJRT_Program_STRUCT_SIZE;
    prog.code_size = 10;
    prog.format = "mlir";
    prog.format_size = 4;
    cp2.program = &prog;
    EXPECT_ERR(API->PJRT_Client_Compile(&cp2), IA, NULL);
    char code[256];
    size_t cn = strlen(k_add);
    memcpy(code, k_add, cn);
    prog.code = code;
    prog.code_size = cn;
    prog.format = NULL;
    EXPECT_ERR(API->PJRT_Client_Compile(&cp2), IA, NULL);
    cp2.client = NULL;
    prog.format = "mlir";
    EXPECT_ERR(API->PJRT_Client_Compile(&cp2), IA, NULL);
    assert_null(cp2.executable);
  }
}

/* BufferFromHostBuffer with bad arguments: INVALID_ARGUMENT, no buffer. */
static void test_bad_host_buffers(void **state) {
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  host_fixture *f = *state;
  PJRT_Client *c = f->c;
  PJRT_Device **d = f->d;
  float *v = f->v;
  const int64_t d4[1] = {4};
  {
    PJRT_Event *done = NULL;
    PJRT_Buffer *nb = NULL;
    /* no client, no data, dims NULL with num_dims 1, no device/memory,
     * a negative dimension, a bad type */
    EXPECT_ERR(from_host(NULL, d[0], PJRT_Buffer_Type_F32, v, d4, 1,
                         PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                         &done, &nb), IA, NULL);
    EXPECT_ERR(from_host(c, d[0], PJRT_Buffer_Type_F32, NULL, d4, 1,
                         PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                         &done, &nb), IA, NULL);
    EXPECT_ERR(from_host(c, d[0], PJRT_Buffer_Type_F32, v, NULL, 1,
                         PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                         &done, &nb), IA, NULL);
    EXPECT_ERR(from_host(c, NULL, PJRT_Buffer_Type_F32, v, d4, 1,
                         PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                         &done, &nb), IA, NULL);
    const int64_t neg[1] = {-4};
    EXPECT_ERR(from_host(c, d[0], PJRT_Buffer_Type_F32, v, neg, 1,
                         PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                         &done, &nb), IA, NULL);
    /* element types that do not exist (not merely unsupported ones) */
    EXPECT_ERR(from_host(c, d[0], PJRT_Buffer_Type_INVALID, v, d4, 1,
                         PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                         &done, &nb), IA, NULL);
    EXPECT_ERR(from_host(c, d[0], (PJRT_Buffer_Type)999, v, d4, 1,
                         PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                         &done, &nb), IA, NULL);
    assert_null(nb);
    assert_null(done);
  }
}

/* Client create options of the wrong type or value. */
static void test_bad_create_options(void **state) {
  (void)state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  /* create options of the wrong type or value */
  {
    /* src/pjrt_plugin/client.c: num_devices is 1..1024 */
    PJRT_NamedValue nv = nv_int("num_devices", -3);
    ARGS(PJRT_Client_Create_Args, cc);
    cc.create_options = &nv;
    cc.num_options = 1;
    EXPECT_ERR(create_or_destroy(&cc), IA, "num_devices");
    nv.int64_value = 1025;
    EXPECT_ERR(create_or_destroy(&cc), IA, "num_devices");
    nv.type = PJRT_NamedValue_kString;
    nv.string_value = "4";
    nv.value_size = 1;
    EXPECT_ERR(create_or_destroy(&cc), IA, "num_devices");
    cc.create_options = NULL; /* num_options 1 but no array */
    EXPECT_ERR(create_or_destroy(&cc), IA, NULL);
    /* a name the plugin does not know is ignored */
    PJRT_NamedValue unknown = nv_int("no_such_option", 1);
    cc.create_options = &unknown;
    OK(API->PJRT_Client_Create(&cc));
    client_destroy(cc.client);
    /* zero devices: outside 1..1024, not the default */
    nv = nv_int("num_devices", 0);
    cc.create_options = &nv;
    EXPECT_ERR(create_or_destroy(&cc), IA, "num_devices");
  }
}

/* Destroy of NULL objects is allowed and a no-op. */
static void test_destroy_null(void **state) {
  (void)state;
  /* Destroy of NULL objects is allowed and a no-op */
  {
    ARGS(PJRT_Buffer_Destroy_Args, bd);
    OK(API->PJRT_Buffer_Destroy(&bd));
    ARGS(PJRT_Event_Destroy_Args, ed);
    OK(API->PJRT_Event_Destroy(&ed));
    ARGS(PJRT_Client_Destroy_Args, cd);
    OK(API->PJRT_Client_Destroy(&cd));
    ARGS(PJRT_LoadedExecutable_Destroy_Args, ld);
    OK(API->PJRT_LoadedExecutable_Destroy(&ld));
    ARGS(PJRT_Executable_Destroy_Args, xd);
    OK(API->PJRT_Executable_Destroy(&xd));
    ARGS(PJRT_Error_Destroy_Args, erd);
    API->PJRT_Error_Destroy(&erd);
  }
}

/* Objects used after their Destroy: INVALID_ARGUMENT, never a crash. */
static void test_released_objects(void **state) {
  (void)state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  get_devices(c, d, NDEV);
  const int64_t d4[1] = {4};
  float v[4] = {1, 2, 3, 4}, got[4];

  PJRT_Buffer *b = upload(c, d[0], PJRT_Buffer_Type_F32, v, d4, 1);
  buffer_destroy(b);
  ARGS(PJRT_Buffer_ElementType_Args, et);
  et.buffer = b;
  EXPECT_ERR(API->PJRT_Buffer_ElementType(&et), IA, NULL);
  ARGS(PJRT_Buffer_ToHostBuffer_Args, th);
  th.src = b;
  th.dst = got;
  th.dst_size = sizeof got;
  EXPECT_ERR(API->PJRT_Buffer_ToHostBuffer(&th), IA, NULL);
  ARGS(PJRT_Buffer_Destroy_Args, bd);
  bd.buffer = b; /* twice */
  EXPECT_ERR(API->PJRT_Buffer_Destroy(&bd), IA, NULL);

  PJRT_LoadedExecutable *x = compile_ok(c, k_add, NULL, 0);
  loaded_destroy(x);
  ARGS(PJRT_LoadedExecutable_GetExecutable_Args, ge);
  ge.loaded_executable = x;
  EXPECT_ERR(API->PJRT_LoadedExecutable_GetExecutable(&ge), IA, NULL);
  PJRT_Buffer *in = upload(c, d[0], PJRT_Buffer_Type_F32, v, d4, 1);
  PJRT_Buffer *args[2] = {in, in}, *out[1];
  PJRT_Event *ev[1];
  EXPECT_ERR(execute(x, 1, 2, args, 1, out, ev, NULL), IA, NULL);
  /* a released buffer as an argument */
  PJRT_LoadedExecutable *x2 = compile_ok(c, k_add, NULL, 0);
  ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
  ad.executable = x2;
  OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
  PJRT_Buffer *in2 =
      upload(c, ad.addressable_devices[0], PJRT_Buffer_Type_F32, v, d4, 1);
  PJRT_Buffer *gone =
      upload(c, ad.addressable_devices[0], PJRT_Buffer_Type_F32, v, d4, 1);
  buffer_destroy(gone);
  PJRT_Buffer *args2[2] = {in2, gone};
  EXPECT_ERR(execute(x2, 1, 2, args2, 1, out, ev, NULL), IA, NULL);
  loaded_destroy(x2);
  buffer_destroy(in2);
  buffer_destroy(in);

  x = compile_ok(c, k_add, NULL, 0);
  PJRT_Executable *ex = get_executable(x);
  executable_destroy(ex);
  loaded_destroy(x);
  ARGS(PJRT_Executable_NumOutputs_Args, no);
  no.executable = ex;
  EXPECT_ERR(API->PJRT_Executable_NumOutputs(&no), IA, NULL);

  b = upload(c, d[1], PJRT_Buffer_Type_F32, v, d4, 1);
  ARGS(PJRT_Buffer_ReadyEvent_Args, re);
  re.buffer = b;
  OK(API->PJRT_Buffer_ReadyEvent(&re));
  event_destroy(re.event);
  ARGS(PJRT_Event_Await_Args, aw);
  aw.event = re.event;
  EXPECT_ERR(API->PJRT_Event_Await(&aw), IA, NULL);
  ARGS(PJRT_Event_Destroy_Args, ed);
  ed.event = re.event; /* twice */
  EXPECT_ERR(API->PJRT_Event_Destroy(&ed), IA, NULL);
  buffer_destroy(b);

  client_destroy(c);
  ARGS(PJRT_Client_PlatformName_Args, pn);
  pn.client = c;
  EXPECT_ERR(API->PJRT_Client_PlatformName(&pn), IA, NULL);
  ARGS(PJRT_Client_Destroy_Args, cd);
  cd.client = c; /* twice */
  EXPECT_ERR(API->PJRT_Client_Destroy(&cd), IA, NULL);
}

/* Execute with the wrong arguments: INVALID_ARGUMENT, nothing returned. */
static void test_bad_execute_args(void **state) {
  (void)state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  PJRT_Client *c = new_client(NDEV);
  PJRT_LoadedExecutable *x = compile_ok(c, k_add, NULL, 0);
  ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
  ad.executable = x;
  OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
  PJRT_Device *dev = ad.addressable_devices[0];
  const int64_t d4[1] = {4}, d3[1] = {3}, d22[2] = {2, 2};
  float v[4] = {1, 2, 3, 4};
  int32_t iv[4] = {1, 2, 3, 4};
  PJRT_Buffer *f4 = upload(c, dev, PJRT_Buffer_Type_F32, v, d4, 1);
  PJRT_Buffer *f3 = upload(c, dev, PJRT_Buffer_Type_F32, v, d3, 1);
  PJRT_Buffer *f22 = upload(c, dev, PJRT_Buffer_Type_F32, v, d22, 2);
  PJRT_Buffer *i4 = upload(c, dev, PJRT_Buffer_Type_S32, iv, d4, 1);
  PJRT_Buffer *out[2];
  PJRT_Event *ev[2];

  PJRT_Buffer *one[1] = {f4};
  EXPECT_ERR(execute(x, 1, 1, one, 1, out, ev, NULL), IA, NULL);
  PJRT_Buffer *three[3] = {f4, f4, f4};
  EXPECT_ERR(execute(x, 1, 3, three, 1, out, ev, NULL), IA, NULL);
  PJRT_Buffer *shape[2] = {f4, f3};
  EXPECT_ERR(execute(x, 1, 2, shape, 1, out, ev, NULL), IA, NULL);
  PJRT_Buffer *rank[2] = {f22, f4};
  EXPECT_ERR(execute(x, 1, 2, rank, 1, out, ev, NULL), IA, NULL);
  PJRT_Buffer *type[2] = {f4, i4};
  EXPECT_ERR(execute(x, 1, 2, type, 1, out, ev, NULL), IA, NULL);
  PJRT_Buffer *hole[2] = {f4, NULL};
  EXPECT_ERR(execute(x, 1, 2, hole, 1, out, ev, NULL), IA, NULL);
  assert_null(out[0]);
  assert_null(ev[0]);
  /* two devices' argument lists for a one-device executable; none */
  PJRT_Buffer *two[4] = {f4, f4, f4, f4};
  EXPECT_ERR(execute(x, 2, 2, two, 1, out, ev, NULL), IA, NULL);
  assert_null(out[0]);
  assert_null(out[1]);
  assert_null(ev[0]);
  assert_null(ev[1]);
  EXPECT_ERR(execute(x, 0, 2, two, 1, out, ev, NULL), IA, NULL);
  /* no argument lists or output lists at all */
  {
    PJRT_Buffer **out_lists[1] = {out};
    ARGS(PJRT_LoadedExecutable_Execute_Args, a);
    a.executable = x;
    a.num_devices = 1;
    a.num_args = 2;
    a.output_lists = out_lists;
    EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(&a), IA, NULL);
    PJRT_Buffer *const list0[2] = {f4, f4};
    PJRT_Buffer *const *arg_lists[1] = {list0};
    a.argument_lists = arg_lists;
    a.output_lists = NULL;
    EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(&a), IA, NULL);
    a.output_lists = out_lists;
    PJRT_ExecuteOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.struct_size = 1; /* options too small */
    a.options = &opt;
    out[0] = NULL;
    EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(&a), IA, NULL);
    assert_null(out[0]);
  }
  /* a replicated executable given one device's arguments */
  {
    PJRT_Device *d[NDEV];
    PJRT_LoadedExecutable *rx = compile_allreduce(c, d);
    PJRT_Buffer *a1[1] = {f4}, *o2[2];
    EXPECT_ERR(execute(rx, 1, 1, a1, 2, o2, ev, NULL), IA, NULL);
    assert_null(o2[0]);
    loaded_destroy(rx);
  }
  buffer_destroy(f4);
  buffer_destroy(f3);
  buffer_destroy(f22);
  buffer_destroy(i4);
  loaded_destroy(x);
  client_destroy(c);
}

/* ======================================================================
 * Two threads on one client, each on its own device
 * ==================================================================== */

typedef struct worker {
  PJRT_Client *client;
  PJRT_Device *device;
  int device_id;
  int seed;
  char fail[512]; /* the first failure, empty if none */
} worker;

/* false (and the message kept) when e is an error */
static bool w_ok(worker *w, PJRT_Error *e, const char *what) {
  if (!e) return true;
  if (!w->fail[0]) {
    char m[400];
    err_text(e, m, sizeof m);
    snprintf(w->fail, sizeof w->fail, "%s: %s", what, m);
  }
  err_destroy(e);
  return false;
}

static bool w_await(worker *w, PJRT_Event *ev, const char *what) {
  if (!ev) {
    snprintf(w->fail, sizeof w->fail, "%s: no event", what);
    return false;
  }
  ARGS(PJRT_Event_Await_Args, a);
  a.event = ev;
  bool ok = w_ok(w, API->PJRT_Event_Await(&a), what);
  ARGS(PJRT_Event_Destroy_Args, dd);
  dd.event = ev;
  return w_ok(w, API->PJRT_Event_Destroy(&dd), "PJRT_Event_Destroy") && ok;
}

static void w_destroy(worker *w, PJRT_Buffer *b) {
  if (!b) return;
  ARGS(PJRT_Buffer_Destroy_Args, a);
  a.buffer = b;
  w_ok(w, API->PJRT_Buffer_Destroy(&a), "PJRT_Buffer_Destroy");
}

static void *worker_main(void *arg) {
  worker *w = arg;
  int64_t one[1] = {w->device_id};
  pb_buf opts;
  pb_compile_options(&opts, 1, 1, one);
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  char code[512];
  size_t cn = strlen(k_add);
  memcpy(code, k_add, cn);
  prog.code = code;
  prog.code_size = cn;
  prog.format = "mlir";
  prog.format_size = 4;
  ARGS(PJRT_Client_Compile_Args, ca);
  ca.client = w->client;
  ca.program = &prog;
  ca.compile_options = (const char *)opts.b;
  ca.compile_options_size = opts.n;
  if (!w_ok(w, API->PJRT_Client_Compile(&ca), "PJRT_Client_Compile"))
    return NULL;
  PJRT_LoadedExecutable *x = ca.executable;
  const int64_t d4[1] = {4};
  for (int it = 0; it < 25 && !w->fail[0]; it++) {
    float a[4], b[4], got[4];
    for (int i = 0; i < 4; i++) {
      a[i] = (float)(w->seed * 1000 + it * 10 + i);
      b[i] = (float)(i - it);
    }
    PJRT_Buffer *in[2] = {NULL, NULL}, *out[1] = {NULL};
    for (int k = 0; k < 2; k++) {
      ARGS(PJRT_Client_BufferFromHostBuffer_Args, u);
      u.client = w->client;
      u.data = k ? b : a;
      u.type = PJRT_Buffer_Type_F32;
      u.dims = d4;
      u.num_dims = 1;
      u.host_buffer_semantics =
          PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
      u.device = w->device;
      if (w_ok(w, API->PJRT_Client_BufferFromHostBuffer(&u),
               "PJRT_Client_BufferFromHostBuffer")) {
        in[k] = u.buffer;
        w_await(w, u.done_with_host_buffer, "done_with_host_buffer");
      }
    }
    if (!w->fail[0]) {
      PJRT_Buffer *const *al[1] = {in};
      PJRT_Buffer **ol[1] = {out};
      PJRT_Event *ev[1] = {NULL};
      ARGS(PJRT_LoadedExecutable_Execute_Args, e);
      PJRT_ExecuteOptions opt;
      memset(&opt, 0, sizeof opt);
      opt.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
      e.executable = x;
      e.options = &opt;
      e.argument_lists = al;
      e.num_devices = 1;
      e.num_args = 2;
      e.output_lists = ol;
      e.device_complete_events = ev;
      if (w_ok(w, API->PJRT_LoadedExecutable_Execute(&e),
               "PJRT_LoadedExecutable_Execute") &&
          w_await(w, ev[0], "device_complete_event")) {
        ARGS(PJRT_Buffer_Device_Args, bd);
        bd.buffer = out[0];
        if (w_ok(w, API->PJRT_Buffer_Device(&bd), "PJRT_Buffer_Device") &&
            bd.device != w->device)
          snprintf(w->fail, sizeof w->fail, "output on the wrong device");
        ARGS(PJRT_Buffer_ToHostBuffer_Args, th);
        th.src = out[0];
        th.dst = got;
        th.dst_size = sizeof got;
        if (w_ok(w, API->PJRT_Buffer_ToHostBuffer(&th),
                 "PJRT_Buffer_ToHostBuffer") &&
            w_await(w, th.event, "ToHostBuffer event"))
          for (int i = 0; i < 4; i++)
            if (got[i] != a[i] + b[i] && !w->fail[0])
              snprintf(w->fail, sizeof w->fail,
                       "iteration %d [%d]: %g, want %g", it, i,
                       (double)got[i], (double)(a[i] + b[i]));
      }
    }
    w_destroy(w, out[0]);
    w_destroy(w, in[0]);
    w_destroy(w, in[1]);
  }
  ARGS(PJRT_LoadedExecutable_Destroy_Args, xd);
  xd.executable = x;
  w_ok(w, API->PJRT_LoadedExecutable_Destroy(&xd),
       "PJRT_LoadedExecutable_Destroy");
  return NULL;
}

static void test_two_threads(void **state) {
  (void)state;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  get_devices(c, d, NDEV);
  worker w[2];
  pthread_t t[2];
  for (int i = 0; i < 2; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].client = c;
    w[i].device = d[1 + 2 * i]; /* devices 1 and 3 */
    w[i].device_id = device_id(w[i].device);
    w[i].seed = i + 1;
    assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++)
    if (w[i].fail[0]) fail_msg("thread %d: %s", i, w[i].fail);
  client_destroy(c);
}

/* ======================================================================
 * 9. Launch paths: participants, multi-device errors, faults (issue #25)
 * ==================================================================== */

/* Execute as execute() does, with the options given (NULL: none). */
static PJRT_Error *execute_opts(PJRT_LoadedExecutable *x, size_t ndev,
                                size_t nargs, PJRT_Buffer *const *args,
                                size_t nout, PJRT_Buffer **outs,
                                PJRT_Event **evs, PJRT_Device *exec_dev,
                                PJRT_ExecuteOptions *opt) {
  PJRT_Buffer *const *arg_lists[MAXD];
  PJRT_Buffer **out_lists[MAXD];
  for (size_t d = 0; d < ndev && d < MAXD; d++) {
    arg_lists[d] = args + d * nargs;
    out_lists[d] = outs + d * nout;
  }
  for (size_t i = 0; i < ndev * nout; i++) outs[i] = NULL;
  if (evs)
    for (size_t d = 0; d < ndev; d++) evs[d] = NULL;
  ARGS(PJRT_LoadedExecutable_Execute_Args, a);
  a.executable = x;
  a.options = opt;
  a.argument_lists = arg_lists;
  a.num_devices = ndev;
  a.num_args = nargs;
  a.output_lists = out_lists;
  a.device_complete_events = evs;
  a.execute_device = exec_dev;
  return API->PJRT_LoadedExecutable_Execute(&a);
}

static void exec_options(PJRT_ExecuteOptions *o, int64_t launch_id) {
  memset(o, 0, sizeof *o);
  o->struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  o->launch_id = (int)launch_id;
}

/* OnReady callback: records the outcome (code, or 0 for success). */
typedef struct on_ready_rec {
  pthread_mutex_t mu;
  int fired, code;
} on_ready_rec;

static void part_ready_cb(PJRT_Error *e, void *user) {
  on_ready_rec *r = user;
  int code = 0;
  if (e) {
    code = err_code(e);
    err_destroy(e);
  }
  pthread_mutex_lock(&r->mu);
  r->code = code;
  r->fired++;
  pthread_mutex_unlock(&r->mu);
}

static int on_ready_wait(on_ready_rec *r) {
  for (int spin = 0; spin < 200000; spin++) {
    pthread_mutex_lock(&r->mu);
    int f = r->fired;
    pthread_mutex_unlock(&r->mu);
    if (f) return f;
    sched_yield();
  }
  return 0;
}

/* Each replica of a 4-replica all_reduce launched on its own through
 * execute_device, sharing one launch_id: asynchronous participants. */
static void test_participants(void **state) {
  (void)state;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  PJRT_LoadedExecutable *x = compile_allreduce(c, d);
  const int64_t d4[1] = {4};
  float in[NDEV][4], want[4] = {0, 0, 0, 0};
  PJRT_Buffer *args[NDEV], *outs[NDEV * 2];
  for (int r = 0; r < NDEV; r++) {
    for (int i = 0; i < 4; i++) {
      in[r][i] = (float)(r * 4 + i) - 3.5f;
      want[i] += in[r][i];
    }
    args[r] = upload(c, d[r], PJRT_Buffer_Type_F32, in[r], d4, 1);
  }
  PJRT_ExecuteOptions opt;
  exec_options(&opt, 41);
  PJRT_Event *evs[NDEV];
  on_ready_rec rec[NDEV];
  for (int r = 0; r < NDEV; r++) {
    OK(execute_opts(x, 1, 1, &args[r], 2, &outs[2 * r], &evs[r], d[r], &opt));
    assert_non_null(evs[r]);
    memset(&rec[r], 0, sizeof rec[r]);
    pthread_mutex_init(&rec[r].mu, NULL);
    ARGS(PJRT_Event_OnReady_Args, on);
    on.event = evs[r];
    on.callback = part_ready_cb;
    on.user_arg = &rec[r];
    OK(API->PJRT_Event_OnReady(&on));
  }
  for (int r = 0; r < NDEV; r++) {
    /* pending or not yet: IsReady answers without waiting */
    ARGS(PJRT_Event_IsReady_Args, ir);
    ir.event = evs[r];
    OK(API->PJRT_Event_IsReady(&ir));
    await_ok(evs[r]);
    assert_int_equal(on_ready_wait(&rec[r]), 1);
    assert_int_equal(rec[r].code, 0);
    pthread_mutex_destroy(&rec[r].mu);
  }
  for (int r = 0; r < NDEV; r++) {
    float got[4];
    assert_ptr_equal(buffer_device(outs[2 * r]), d[r]);
    download(outs[2 * r], got, sizeof got);
    assert_memory_equal(got, want, sizeof want);
    uint32_t id = 99;
    download(outs[2 * r + 1], &id, sizeof id);
    assert_int_equal(id, r);
    buffer_destroy(outs[2 * r]);
    buffer_destroy(outs[2 * r + 1]);
  }

  /* the same without completion events: outputs still come back */
  exec_options(&opt, 42);
  for (int r = 0; r < NDEV; r++)
    OK(execute_opts(x, 1, 1, &args[r], 2, &outs[2 * r], NULL, d[r], &opt));
  for (int r = 0; r < NDEV; r++) {
    float got[4];
    download(outs[2 * r], got, sizeof got);
    assert_memory_equal(got, want, sizeof want);
    buffer_destroy(outs[2 * r]);
    buffer_destroy(outs[2 * r + 1]);
  }

  /* wrong participants */
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  PJRT_Event *ev[2];
  EXPECT_ERR(execute_opts(x, 1, 1, &args[0], 2, outs, ev, d[0], NULL), IA,
             "needs options->launch_id");
  exec_options(&opt, 0);
  EXPECT_ERR(execute_opts(x, 1, 1, &args[0], 2, outs, ev, d[0], &opt), IA,
             "needs options->launch_id");
  assert_null(outs[0]);
  exec_options(&opt, 43);
  EXPECT_ERR(execute_opts(x, 2, 1, args, 2, outs, ev, d[0], &opt), IA,
             "num_devices must be 1, not 2");
  {
    PJRT_Buffer *gone_arg[1] = {NULL};
    EXPECT_ERR(execute_opts(x, 1, 1, gone_arg, 2, outs, ev, d[1], &opt), IA,
               "argument_lists[0][0] is NULL");
  }
  /* a device of another client, then one of a destroyed client */
  PJRT_Client *c2 = new_client(2);
  PJRT_Device *d2[2];
  get_devices(c2, d2, 2);
  EXPECT_ERR(execute_opts(x, 1, 1, &args[0], 2, outs, ev, d2[0], &opt), IA,
             "execute_device belongs to another client");
  client_destroy(c2);
  EXPECT_ERR(execute_opts(x, 1, 1, &args[0], 2, outs, ev, d2[0], &opt), IA,
             "args->execute_device is not a live PJRT_Device");
  loaded_destroy(x);

  /* a launch of 2 replicas on devices 0 and 1: device 3 takes no part */
  int64_t ids[2] = {device_id(d[0]), device_id(d[1])};
  pb_buf o;
  pb_compile_options(&o, 2, 1, ids);
  x = compile_ok(c, k_add, o.b, o.n);
  PJRT_Buffer *two[2] = {args[0], args[0]};
  EXPECT_ERR(execute_opts(x, 1, 2, two, 1, outs, ev, d[3], &opt), IA,
             "execute_device 3 takes no part in the launch of @main");
  loaded_destroy(x);
  for (int r = 0; r < NDEV; r++) buffer_destroy(args[r]);
  client_destroy(c);
}

static int g_send_cb_calls;
static PJRT_Error *send_cb(PJRT_Chunk *chunk, PJRT_CallbackError *cb_error,
                           size_t total, bool done, void *user) {
  (void)chunk; (void)cb_error; (void)total; (void)done; (void)user;
  g_send_cb_calls++;
  return NULL;
}

/* Multi-device launches given bad lists or options, and failing midway. */
static void test_multi_launch_errors(void **state) {
  (void)state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  PJRT_LoadedExecutable *x = compile_allreduce(c, d);
  const int64_t d4[1] = {4}, d3[1] = {3};
  float v[4] = {1, 2, 3, 4};
  PJRT_Buffer *args[NDEV], *outs[NDEV * 2];
  PJRT_Event *evs[NDEV];
  for (int r = 0; r < NDEV; r++)
    args[r] = upload(c, d[r], PJRT_Buffer_Type_F32, v, d4, 1);

  /* argument_lists[2] NULL; output_lists[1] NULL */
  {
    PJRT_Buffer *const *al[NDEV] = {&args[0], &args[1], NULL, &args[3]};
    PJRT_Buffer **ol[NDEV] = {&outs[0], &outs[2], &outs[4], &outs[6]};
    ARGS(PJRT_LoadedExecutable_Execute_Args, a);
    a.executable = x;
    a.argument_lists = al;
    a.num_devices = NDEV;
    a.num_args = 1;
    a.output_lists = ol;
    EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(&a), IA,
               "argument_lists[2] is NULL");
    al[2] = &args[2];
    ol[1] = NULL;
    EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(&a), IA,
               "output_lists[1] is NULL");
  }
  /* send callbacks: unimplemented */
  {
    PJRT_SendCallbackInfo info;
    memset(&info, 0, sizeof info);
    info.channel_id = 1;
    info.send_callback = send_cb;
    PJRT_SendCallbackInfo *per_dev[1] = {&info};
    PJRT_ExecuteOptions opt;
    exec_options(&opt, 5);
    opt.send_callbacks = per_dev;
    opt.num_send_ops = 1;
    EXPECT_ERR(execute_opts(x, NDEV, 1, args, 2, outs, evs, NULL, &opt),
               PJRT_Error_Code_UNIMPLEMENTED, "send/recv callbacks");
    PJRT_Buffer *one[2] = {args[0], args[0]};
    PJRT_LoadedExecutable *x1 = compile_ok(c, k_add, NULL, 0);
    PJRT_Buffer *out1[1];
    /* the one-device dispatch path hands it to the checked path */
    EXPECT_ERR(execute_opts(x1, 1, 2, one, 1, out1, evs, NULL, &opt),
               PJRT_Error_Code_UNIMPLEMENTED, "send/recv callbacks");
    opt.num_send_ops = 0;
    opt.recv_callbacks = (PJRT_RecvCallbackInfo **)per_dev;
    opt.num_recv_ops = 1;
    EXPECT_ERR(execute_opts(x1, 1, 2, one, 1, out1, evs, NULL, &opt),
               PJRT_Error_Code_UNIMPLEMENTED, "send/recv callbacks");
    assert_null(out1[0]);
    loaded_destroy(x1);
    assert_int_equal(g_send_cb_calls, 0);
  }
  /* a replica's argument of the wrong shape: xrt refuses the launch */
  {
    PJRT_Buffer *bad = upload(c, d[2], PJRT_Buffer_Type_F32, v, d3, 1);
    PJRT_Buffer *mixed[NDEV] = {args[0], args[1], bad, args[3]};
    EXPECT_ERR(execute(x, NDEV, 1, mixed, 2, outs, evs, NULL), IA, NULL);
    for (int i = 0; i < NDEV * 2; i++) assert_null(outs[i]);
    for (int i = 0; i < NDEV; i++) assert_null(evs[i]);
    buffer_destroy(bad);
  }
  /* the launch still works afterwards */
  execute_ok(x, NDEV, 1, args, 2, outs);
  for (int r = 0; r < NDEV; r++) {
    float got[4];
    download(outs[2 * r], got, sizeof got);
    for (int i = 0; i < 4; i++) assert_true(got[i] == 4.0f * v[i]);
  }
  for (int i = 0; i < NDEV * 2; i++) buffer_destroy(outs[i]);
  /* num_devices 0 with no lists at all: the launch size is reported */
  {
    ARGS(PJRT_LoadedExecutable_Execute_Args, a);
    a.executable = x;
    a.num_args = 1;
    EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(&a), IA,
               "runs on 4 device(s) (4 replica(s) x 1 partition(s)), "
               "num_devices is 0");
  }
  /* the executable deleted: refused */
  {
    ARGS(PJRT_LoadedExecutable_Delete_Args, del);
    del.executable = x;
    OK(API->PJRT_LoadedExecutable_Delete(&del));
    EXPECT_ERR(execute(x, NDEV, 1, args, 2, outs, evs, NULL), IA,
               "the executable has been deleted");
  }
  loaded_destroy(x);
  for (int r = 0; r < NDEV; r++) buffer_destroy(args[r]);
  client_destroy(c);
}

/* The general Execute path's remaining ways in (issue #25): send/recv
 * op counts without callbacks (accepted), recv callbacks (refused), a
 * caller of an older Execute_Args without execute_device (the field is
 * not read: on both the dispatch and the general path), and a participant
 * whose xrt launch itself fails (an argument on another device). */
static void recv_cb_unused(PJRT_CopyToDeviceStream *stream, void *user) {
  (void)stream;
  (void)user;
}

static void test_execute_general_edges(void **state) {
  (void)state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  PJRT_LoadedExecutable *x = compile_allreduce(c, d);
  const int64_t d4[1] = {4};
  float in[NDEV][4], want[4] = {0, 0, 0, 0};
  PJRT_Buffer *args[NDEV], *outs[NDEV * 2];
  PJRT_Event *evs[NDEV];
  for (int r = 0; r < NDEV; r++) {
    for (int i = 0; i < 4; i++) {
      in[r][i] = (float)(r * 10 + i) + 0.5f;
      want[i] += in[r][i];
    }
    args[r] = upload(c, d[r], PJRT_Buffer_Type_F32, in[r], d4, 1);
  }

  /* send/recv op counts without callbacks: nothing to refuse */
  PJRT_ExecuteOptions opt;
  exec_options(&opt, 51);
  opt.num_send_ops = 1;
  opt.num_recv_ops = 2;
  OK(execute_opts(x, NDEV, 1, args, 2, outs, evs, NULL, &opt));
  for (int r = 0; r < NDEV; r++) {
    await_ok(evs[r]);
    float got[4];
    uint32_t id = 99;
    download(outs[2 * r], got, sizeof got);
    assert_memory_equal(got, want, sizeof want);
    download(outs[2 * r + 1], &id, sizeof id);
    assert_int_equal(id, r);
    buffer_destroy(outs[2 * r]);
    buffer_destroy(outs[2 * r + 1]);
  }
  /* recv callbacks: refused before anything runs */
  PJRT_RecvCallbackInfo rinfo;
  memset(&rinfo, 0, sizeof rinfo);
  rinfo.recv_callback = recv_cb_unused;
  PJRT_RecvCallbackInfo *rlist[1] = {&rinfo};
  exec_options(&opt, 52);
  opt.num_recv_ops = 1;
  opt.recv_callbacks = rlist;
  opt.num_send_ops = 0;
  EXPECT_ERR(execute_opts(x, NDEV, 1, args, 2, outs, evs, NULL, &opt),
             PJRT_Error_Code_UNIMPLEMENTED,
             "send/recv callbacks are not implemented by xrt");
  for (int i = 0; i < NDEV * 2; i++) assert_null(outs[i]);

  /* an older caller: struct_size ends before execute_device, whose
   * stale value (a participant's device, which needs num_devices 1 and a
   * launch_id) must not be read */
  {
    PJRT_Buffer *const *al[NDEV] = {&args[0], &args[1], &args[2], &args[3]};
    PJRT_Buffer **ol[NDEV] = {&outs[0], &outs[2], &outs[4], &outs[6]};
    for (int i = 0; i < NDEV * 2; i++) outs[i] = NULL;
    ARGS(PJRT_LoadedExecutable_Execute_Args, a);
    a.struct_size = offsetof(PJRT_LoadedExecutable_Execute_Args,
                             device_complete_events) +
                    sizeof a.device_complete_events;
    a.executable = x;
    a.argument_lists = al;
    a.num_devices = NDEV;
    a.num_args = 1;
    a.output_lists = ol;
    a.device_complete_events = evs;
    a.execute_device = d[2];
    OK(API->PJRT_LoadedExecutable_Execute(&a));
    for (int r = 0; r < NDEV; r++) {
      await_ok(evs[r]);
      float got[4];
      download(outs[2 * r], got, sizeof got);
      assert_memory_equal(got, want, sizeof want);
      assert_ptr_equal(buffer_device(outs[2 * r]), d[r]);
      buffer_destroy(outs[2 * r]);
      buffer_destroy(outs[2 * r + 1]);
    }
  }

  /* a participant (replica 1 on d[1]) given a buffer of d[0]: xrt's
   * launch fails, no output and no event are left behind */
  exec_options(&opt, 53);
  outs[0] = outs[1] = NULL;
  PJRT_Event *ev1 = NULL;
  PJRT_Error *pe = execute_opts(x, 1, 1, &args[0], 2, outs, &ev1, d[1], &opt);
  assert_non_null(pe);
  char m[1024];
  err_text(pe, m, sizeof m);
  assert_int_equal(err_code(pe), IA);
  assert_non_null(strstr(m, "PJRT_LoadedExecutable_Execute: argument 0 "
                          "lives on device 0, not on device 1"));
  err_destroy(pe);
  assert_null(outs[0]);
  assert_null(outs[1]);
  assert_null(ev1);
  loaded_destroy(x);

  /* one device, older caller: execute_device (another device) unread, the
   * dispatch path runs on the executable's own device */
  x = compile_ok(c, k_add, NULL, 0);
  ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
  ad.executable = x;
  OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
  int own = -1;
  for (int i = 0; i < NDEV; i++)
    if (ad.addressable_devices[0] == d[i]) own = i;
  assert_true(own >= 0);
  {
    PJRT_Buffer *two[2] = {args[own], args[own]};
    PJRT_Buffer *const *al[1] = {two};
    PJRT_Buffer *out1 = NULL;
    PJRT_Buffer **ol[1] = {&out1};
    ARGS(PJRT_LoadedExecutable_Execute_Args, a);
    a.struct_size = offsetof(PJRT_LoadedExecutable_Execute_Args,
                             device_complete_events) +
                    sizeof a.device_complete_events;
    a.executable = x;
    a.argument_lists = al;
    a.num_devices = 1;
    a.num_args = 2;
    a.output_lists = ol;
    a.execute_device = d[(own + 1) % NDEV];
    OK(API->PJRT_LoadedExecutable_Execute(&a));
    assert_ptr_equal(buffer_device(out1), d[own]);
    float got[4];
    download(out1, got, sizeof got);
    for (int i = 0; i < 4; i++)
      assert_true(got[i] == in[own][i] + in[own][i]);
    buffer_destroy(out1);
  }
  loaded_destroy(x);
  for (int r = 0; r < NDEV; r++) buffer_destroy(args[r]);
  client_destroy(c);
}

/* ======================================================================
 * 10. Element types, layouts and targets of host buffers (issue #25)
 * ==================================================================== */

/* Every PJRT element type: round trip of the type, dims and (for the
 * whole-byte types) the bytes; TOKEN unimplemented, values outside the
 * enum invalid. */
static void test_buffer_types_and_layouts(void **state) {
  host_fixture *f = *state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  const int UN = PJRT_Error_Code_UNIMPLEMENTED;
  PJRT_Client *c = f->c;
  PJRT_Device **d = f->d;
  const int64_t d8[1] = {8};
  uint8_t src[128], got[128];
  for (int i = 0; i < 128; i++) src[i] = (uint8_t)(i & 1);
  for (int t = PJRT_Buffer_Type_PRED; t <= PJRT_Buffer_Type_F8E3M4; t++) {
    PJRT_Buffer_Type ty = (PJRT_Buffer_Type)t;
    PJRT_Event *done = NULL;
    PJRT_Buffer *b = NULL;
    PJRT_Error *e = from_host(
        c, d[1], ty, src, d8, 1,
        PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes, &done, &b);
    if (ty == PJRT_Buffer_Type_TOKEN) {
      EXPECT_ERR(e, UN, "element type 23 is not supported");
      assert_null(b);
      continue;
    }
    OK(e);
    await_ok(done);
    check_buffer_shape(b, ty, d8, 1);
    size_t es = type_bytes(ty);
    if (ty >= PJRT_Buffer_Type_F8E5M2 && ty <= PJRT_Buffer_Type_F8E4M3FNUZ)
      es = 1;
    if (ty == PJRT_Buffer_Type_F8E4M3 || ty == PJRT_Buffer_Type_F8E3M4) es = 1;
    if (es) {
      memset(got, 0xee, sizeof got);
      download(b, got, 8 * es);
      assert_memory_equal(got, src, 8 * es);
    }
    buffer_destroy(b);
  }
  PJRT_Event *done = NULL;
  PJRT_Buffer *b = NULL;
  EXPECT_ERR(from_host(c, d[0], PJRT_Buffer_Type_INVALID, src, d8, 1,
                       PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                       &done, &b),
             IA, "0 is not a PJRT element type");
  EXPECT_ERR(from_host(c, d[0], (PJRT_Buffer_Type)200, src, d8, 1,
                       PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                       &done, &b),
             IA, "200 is not a PJRT element type");
  /* rank 17 (xrt has 16 at most), a negative dimension */
  int64_t d17[17];
  for (int i = 0; i < 17; i++) d17[i] = 1;
  EXPECT_ERR(from_host(c, d[0], PJRT_Buffer_Type_U8, src, d17, 17,
                       PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                       &done, &b),
             UN, "rank 17");
  const int64_t neg[2] = {2, -1};
  EXPECT_ERR(from_host(c, d[0], PJRT_Buffer_Type_U8, src, neg, 2,
                       PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                       &done, &b),
             IA, "dims[1] is -1");
  /* rank 6 (more than 4 dims kept inline) round trips */
  {
    const int64_t d6[6] = {1, 2, 1, 2, 1, 3};
    b = upload(c, d[0], PJRT_Buffer_Type_U8, src, d6, 6);
    check_buffer_shape(b, PJRT_Buffer_Type_U8, d6, 6);
    memset(got, 0xee, sizeof got);
    download(b, got, 12);
    assert_memory_equal(got, src, 12);
    buffer_destroy(b);
  }
  /* an empty array needs no data */
  {
    const int64_t d0[2] = {3, 0};
    OK(from_host(c, d[0], PJRT_Buffer_Type_F32, NULL, d0, 2,
                 PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, &done,
                 &b));
    await_ok(done);
    check_buffer_shape(b, PJRT_Buffer_Type_F32, d0, 2);
    buffer_destroy(b);
  }

  /* device layouts: the dense row-major one, tiled or strided, is taken;
   * any other is UNIMPLEMENTED; a too small struct INVALID_ARGUMENT */
  const int64_t d23[2] = {2, 3};
  const float m[6] = {1, 2, 3, 4, 5, 6};
  const int64_t m2m[2] = {1, 0}, m2m_t[2] = {0, 1};
  const int64_t str_dense[2] = {12, 4}, str_t[2] = {4, 8};
  struct {
    int type;
    const int64_t *v;
    size_t n, struct_size;
    int want; /* 0 ok, else the code */
    const char *msg;
  } cases[] = {
      {PJRT_Buffer_MemoryLayout_Type_Tiled, m2m, 2,
       PJRT_Buffer_MemoryLayout_STRUCT_SIZE, 0, NULL},
      {PJRT_Buffer_MemoryLayout_Type_Tiled, m2m_t, 2,
       PJRT_Buffer_MemoryLayout_STRUCT_SIZE, UN,
       "args->device_layout is not the dense row-major layout"},
      {PJRT_Buffer_MemoryLayout_Type_Tiled, m2m, 1,
       PJRT_Buffer_MemoryLayout_STRUCT_SIZE, UN, "dense row-major"},
      {PJRT_Buffer_MemoryLayout_Type_Tiled, NULL, 2,
       PJRT_Buffer_MemoryLayout_STRUCT_SIZE, UN, "dense row-major"},
      {PJRT_Buffer_MemoryLayout_Type_Strides, str_dense, 2,
       PJRT_Buffer_MemoryLayout_STRUCT_SIZE, 0, NULL},
      {PJRT_Buffer_MemoryLayout_Type_Strides, str_t, 2,
       PJRT_Buffer_MemoryLayout_STRUCT_SIZE, UN, "dense row-major"},
      {PJRT_Buffer_MemoryLayout_Type_Strides, str_dense, 1,
       PJRT_Buffer_MemoryLayout_STRUCT_SIZE, UN, "dense row-major"},
      {PJRT_Buffer_MemoryLayout_Type_Strides, NULL, 2,
       PJRT_Buffer_MemoryLayout_STRUCT_SIZE, UN, "dense row-major"},
      {7, m2m, 2, PJRT_Buffer_MemoryLayout_STRUCT_SIZE, UN,
       "dense row-major"},
      {PJRT_Buffer_MemoryLayout_Type_Tiled, m2m, 2, 8, IA,
       "args->device_layout->struct_size is 8"},
  };
  for (size_t k = 0; k < COUNT(cases); k++) {
    PJRT_Buffer_MemoryLayout l;
    memset(&l, 0, sizeof l);
    l.struct_size = cases[k].struct_size;
    l.type = (PJRT_Buffer_MemoryLayout_Type)cases[k].type;
    if (cases[k].type == PJRT_Buffer_MemoryLayout_Type_Strides) {
      l.strides.struct_size = PJRT_Buffer_MemoryLayout_Strides_STRUCT_SIZE;
      l.strides.byte_strides = cases[k].v;
      l.strides.num_byte_strides = cases[k].n;
    } else {
      l.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
      l.tiled.minor_to_major = cases[k].v;
      l.tiled.minor_to_major_size = cases[k].n;
    }
    ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
    a.client = c;
    a.data = m;
    a.type = PJRT_Buffer_Type_F32;
    a.dims = d23;
    a.num_dims = 2;
    a.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    a.device = d[0];
    a.device_layout = &l;
    PJRT_Error *e = API->PJRT_Client_BufferFromHostBuffer(&a);
    if (!cases[k].want) {
      OK(e);
      await_ok(a.done_with_host_buffer);
      float back[6];
      download(a.buffer, back, sizeof back);
      assert_memory_equal(back, m, sizeof m);
      /* the same layout given for the download */
      ARGS(PJRT_Buffer_ToHostBuffer_Args, th);
      th.src = a.buffer;
      th.dst = back;
      th.dst_size = sizeof back;
      th.host_layout = &l;
      OK(API->PJRT_Buffer_ToHostBuffer(&th));
      await_ok(th.event);
      buffer_destroy(a.buffer);
    } else {
      if (!e) fail_msg("layout case %zu accepted", k);
      EXPECT_ERR(e, cases[k].want, cases[k].msg);
      assert_null(a.buffer);
    }
  }
  /* a host layout that is not row-major for ToHostBuffer */
  {
    PJRT_Buffer_MemoryLayout l;
    memset(&l, 0, sizeof l);
    l.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
    l.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
    l.tiled.minor_to_major = m2m; /* {1}: no dimension 1 in rank 1 */
    l.tiled.minor_to_major_size = 1;
    float back[4];
    ARGS(PJRT_Buffer_ToHostBuffer_Args, th);
    th.src = f->b;
    th.dst = back;
    th.dst_size = sizeof back;
    th.host_layout = &l;
    EXPECT_ERR(API->PJRT_Buffer_ToHostBuffer(&th), UN,
               "args->host_layout is not the dense row-major layout");
    /* dst too small */
    th.host_layout = NULL;
    th.dst_size = 15;
    EXPECT_ERR(API->PJRT_Buffer_ToHostBuffer(&th), IA,
               "dst_size is 15, the buffer has 16 bytes");
  }
  /* byte_strides of the wrong count; strided 2x3 (the transpose of a
   * 3x2 array) gathered */
  {
    const float t32[6] = {1, 4, 2, 5, 3, 6}; /* 3x2, t32[j][i] = m[i][j] */
    const int64_t tstr[2] = {4, 8};
    ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
    a.client = c;
    a.data = t32;
    a.type = PJRT_Buffer_Type_F32;
    a.dims = d23;
    a.num_dims = 2;
    a.byte_strides = tstr;
    a.num_byte_strides = 1;
    a.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    a.device = d[0];
    EXPECT_ERR(API->PJRT_Client_BufferFromHostBuffer(&a), IA,
               "1 byte_strides for 2 dimensions");
    a.num_byte_strides = 2;
    OK(API->PJRT_Client_BufferFromHostBuffer(&a));
    await_ok(a.done_with_host_buffer);
    float back[6];
    download(a.buffer, back, sizeof back);
    assert_memory_equal(back, m, sizeof m);
    buffer_destroy(a.buffer);
    /* a scalar "gathered" with strides of rank 0 is a plain copy */
    const float s = 2.5f;
    a.data = &s;
    a.dims = NULL;
    a.num_dims = 0;
    a.byte_strides = tstr;
    a.num_byte_strides = 0;
    OK(API->PJRT_Client_BufferFromHostBuffer(&a));
    await_ok(a.done_with_host_buffer);
    float sb = 0;
    download(a.buffer, &sb, sizeof sb);
    assert_true(sb == 2.5f);
    buffer_destroy(a.buffer);
  }

  /* targets: memory alone, memory and its device, a memory of another
   * device, a device of another client, stale handles, semantics */
  {
    const int64_t d4[1] = {4};
    const float v4[4] = {9, 8, 7, 6};
    ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
    a.client = c;
    a.data = v4;
    a.type = PJRT_Buffer_Type_F32;
    a.dims = d4;
    a.num_dims = 1;
    a.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    a.memory = default_memory(d[2]);
    OK(API->PJRT_Client_BufferFromHostBuffer(&a));
    await_ok(a.done_with_host_buffer);
    assert_ptr_equal(buffer_device(a.buffer), d[2]);
    ARGS(PJRT_Buffer_Memory_Args, bm);
    bm.buffer = a.buffer;
    OK(API->PJRT_Buffer_Memory(&bm));
    assert_ptr_equal(bm.memory, a.memory);
    buffer_destroy(a.buffer);
    a.device = d[2];
    OK(API->PJRT_Client_BufferFromHostBuffer(&a));
    await_ok(a.done_with_host_buffer);
    buffer_destroy(a.buffer);
    a.device = d[3];
    EXPECT_ERR(API->PJRT_Client_BufferFromHostBuffer(&a), IA,
               "args->memory is not a memory of args->device");
    a.host_buffer_semantics = (PJRT_HostBufferSemantics)9;
    EXPECT_ERR(API->PJRT_Client_BufferFromHostBuffer(&a), IA,
               "unknown host_buffer_semantics 9");
    a.host_buffer_semantics =
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    PJRT_Client *c2 = new_client(2);
    PJRT_Device *d2[2];
    get_devices(c2, d2, 2);
    PJRT_Memory *m2 = default_memory(d2[1]);
    a.memory = NULL;
    a.device = d2[1];
    EXPECT_ERR(API->PJRT_Client_BufferFromHostBuffer(&a), IA,
               "the device belongs to another client");
    /* copies across clients are refused */
    ARGS(PJRT_Buffer_CopyToDevice_Args, cp);
    cp.buffer = f->b;
    cp.dst_device = d2[0];
    EXPECT_ERR(API->PJRT_Buffer_CopyToDevice(&cp), IA,
               "the destination belongs to another client");
    assert_null(cp.dst_buffer);
    ARGS(PJRT_Buffer_CopyToMemory_Args, cm);
    cm.buffer = f->b;
    cm.dst_memory = m2;
    EXPECT_ERR(API->PJRT_Buffer_CopyToMemory(&cm), IA,
               "the destination belongs to another client");
    client_destroy(c2);
    EXPECT_ERR(API->PJRT_Client_BufferFromHostBuffer(&a), IA,
               "args->device is not a live PJRT_Device");
    a.device = NULL;
    a.memory = m2;
    EXPECT_ERR(API->PJRT_Client_BufferFromHostBuffer(&a), IA,
               "args->memory is not a live PJRT_Memory");
    cp.dst_device = d2[0];
    EXPECT_ERR(API->PJRT_Buffer_CopyToDevice(&cp), IA,
               "args->dst_device is not a live PJRT_Device");
    cp.dst_device = NULL;
    EXPECT_ERR(API->PJRT_Buffer_CopyToDevice(&cp), IA, "args->dst_device");
    EXPECT_ERR(API->PJRT_Buffer_CopyToMemory(&cm), IA,
               "args->dst_memory is not a live PJRT_Memory");
    cm.dst_memory = NULL;
    EXPECT_ERR(API->PJRT_Buffer_CopyToMemory(&cm), IA, "args->dst_memory");
    /* CopyToMemory onto the buffer's own memory */
    cm.dst_memory = default_memory(d[0]);
    EXPECT_ERR(API->PJRT_Buffer_CopyToMemory(&cm), IA,
               "the buffer is already on device 0");
    /* a destroyed client */
    a.client = c2;
    EXPECT_ERR(API->PJRT_Client_BufferFromHostBuffer(&a), IA,
               "args->client is not a live PJRT_Client");
  }
}

/* ======================================================================
 * 11. Client create options: memory, threads, injected faults
 * ==================================================================== */

static PJRT_NamedValue nv_str(const char *name, const char *v) {
  PJRT_NamedValue nv;
  memset(&nv, 0, sizeof nv);
  nv.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  nv.name = name;
  nv.name_size = strlen(name);
  nv.type = PJRT_NamedValue_kString;
  nv.string_value = v;
  nv.value_size = v ? strlen(v) : 0;
  return nv;
}

static PJRT_Error *create_with(PJRT_NamedValue *opts, size_t n,
                               PJRT_Client **out) {
  ARGS(PJRT_Client_Create_Args, a);
  a.create_options = opts;
  a.num_options = n;
  PJRT_Error *e = API->PJRT_Client_Create(&a);
  *out = a.client;
  return e;
}

static void test_create_options_faults(void **state) {
  (void)state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  PJRT_Client *c = NULL;
  /* wrong values */
  {
    PJRT_NamedValue o[2] = {nv_int("num_devices", 2),
                            nv_int("memory_per_device", 0)};
    EXPECT_ERR(create_with(o, 2, &c), IA,
               "create option memory_per_device is 0");
    assert_null(c);
    o[1] = nv_int("threads_per_device", 4097);
    EXPECT_ERR(create_with(o, 2, &c), IA,
               "create option threads_per_device is 4097; at most 4096");
    o[1] = nv_int("memory_per_device", -5);
    EXPECT_ERR(create_with(o, 2, &c), IA,
               "create option memory_per_device is -5; it cannot be "
               "negative");
    o[1] = nv_str("inject_fault_kind", "disk");
    EXPECT_ERR(create_with(o, 2, &c), IA,
               "create option inject_fault_kind is \"disk\"; expected "
               "kernel, transfer, collective or alloc");
    o[1] = nv_str("inject_fault_kind", "allox"); /* as long as "alloc" */
    EXPECT_ERR(create_with(o, 2, &c), IA,
               "create option inject_fault_kind is \"allox\"");
    /* NULL and empty: no kind (it printed a NULL string through %.*s) */
    o[1] = nv_str("inject_fault_kind", NULL);
    EXPECT_ERR(create_with(o, 2, &c), IA,
               "create option inject_fault_kind is \"\"; expected");
    o[1] = nv_str("inject_fault_kind", NULL);
    o[1].value_size = 3;
    EXPECT_ERR(create_with(o, 2, &c), IA,
               "the value of create option inject_fault_kind");
    o[1] = nv_int("inject_fault_kind", 1);
    EXPECT_ERR(create_with(o, 2, &c), IA,
               "create option inject_fault_kind must be of type string, "
               "not int64");
    struct { int t; const char *name; } types[] = {
        {PJRT_NamedValue_kInt64List, "int64 list"},
        {PJRT_NamedValue_kFloat, "float"},
        {PJRT_NamedValue_kBool, "bool"},
        {77, "unknown type"}};
    for (size_t k = 0; k < COUNT(types); k++) {
      char want[128];
      o[1] = nv_int("num_devices", 1);
      o[1].type = (PJRT_NamedValue_Type)types[k].t;
      snprintf(want, sizeof want,
               "num_devices must be of type int64, not %s", types[k].name);
      EXPECT_ERR(create_with(o, 2, &c), IA, want);
    }
    o[1] = nv_int("inject_fault_device", 2);
    EXPECT_ERR(create_with(o, 2, &c), IA,
               "create option inject_fault_device is 2, but the client has "
               "2 device(s)");
    o[1] = nv_int("num_devices", 1);
    o[1].struct_size = 8;
    EXPECT_ERR(create_with(o, 2, &c), IA, "create_options[1].struct_size is 8");
    o[1] = nv_int("num_devices", 1);
    o[1].name = NULL;
    EXPECT_ERR(create_with(o, 2, &c), IA, "create_options[1].name is NULL");
    assert_null(c);
    /* an empty name (NULL, size 0) names no option: ignored */
    o[1].name_size = 0;
    OK(create_with(o, 2, &c));
    PJRT_Device *two[2];
    get_devices(c, two, 2);
    client_destroy(c);
    c = NULL;
  }
  /* memory and threads per device taken: a buffer that does not fit the
   * device's memory fails to upload */
  {
    PJRT_NamedValue o[3] = {nv_int("num_devices", 1),
                            nv_int("memory_per_device", 4096),
                            nv_int("threads_per_device", 1)};
    OK(create_with(o, 3, &c));
    PJRT_Device *d[1];
    get_devices(c, d, 1);
    static float big[2048];
    const int64_t dims[1] = {2048};
    PJRT_Event *done = NULL;
    PJRT_Buffer *b = NULL;
    EXPECT_ERR(from_host(c, d[0], PJRT_Buffer_Type_F32, big, dims, 1,
                         PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                         &done, &b),
               PJRT_Error_Code_RESOURCE_EXHAUSTED, NULL);
    assert_null(b);
    client_destroy(c);
  }
  /* a kernel fault on device 1 after 0 steps: its next execution fails,
   * in a multi-device launch (after it started) as alone */
  {
    PJRT_NamedValue o[3] = {nv_int("num_devices", NDEV),
                            nv_int("inject_fault_device", 1),
                            nv_int("inject_fault_after", 0)};
    OK(create_with(o, 3, &c));
    PJRT_Device *d[NDEV];
    PJRT_LoadedExecutable *x = compile_allreduce(c, d);
    const int64_t d4[1] = {4};
    float v[4] = {1, 2, 3, 4};
    PJRT_Buffer *args[NDEV], *outs[NDEV * 2];
    PJRT_Event *evs[NDEV];
    for (int r = 0; r < NDEV; r++)
      args[r] = upload(c, d[r], PJRT_Buffer_Type_F32, v, d4, 1);
    PJRT_Error *e = execute(x, NDEV, 1, args, 2, outs, evs, NULL);
    assert_non_null(e);
    char m[512];
    err_text(e, m, sizeof m);
    err_destroy(e);
    assert_non_null(strstr(m, "PJRT_LoadedExecutable_Execute"));
    for (int i = 0; i < NDEV * 2; i++) assert_null(outs[i]);
    /* the fault is spent: the launch runs */
    execute_ok(x, NDEV, 1, args, 2, outs);
    for (int r = 0; r < NDEV; r++) {
      float got[4];
      download(outs[2 * r], got, sizeof got);
      for (int i = 0; i < 4; i++) assert_true(got[i] == 4.0f * v[i]);
    }
    for (int i = 0; i < NDEV * 2; i++) buffer_destroy(outs[i]);
    for (int r = 0; r < NDEV; r++) buffer_destroy(args[r]);
    loaded_destroy(x);
    client_destroy(c);
  }
  /* each fault kind by name is accepted; a transfer fault fails the
   * next upload to the device */
  {
    static const char *kinds[] = {"kernel", "transfer", "collective",
                                  "alloc"};
    for (size_t k = 0; k < COUNT(kinds); k++) {
      PJRT_NamedValue o[3] = {nv_int("num_devices", 2),
                              nv_str("inject_fault_kind", kinds[k]),
                              nv_int("inject_fault_device", 0)};
      OK(create_with(o, 3, &c));
      PJRT_Device *d[2];
      get_devices(c, d, 2);
      const int64_t d4[1] = {4};
      float v[4] = {1, 2, 3, 4}, got[4];
      PJRT_Event *done = NULL;
      PJRT_Buffer *b = NULL;
      PJRT_Error *e =
          from_host(c, d[0], PJRT_Buffer_Type_F32, v, d4, 1,
                    PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, &done,
                    &b);
      if (k == 1 || k == 3) {
        assert_non_null(e);
        err_destroy(e);
        assert_null(b);
        b = upload(c, d[0], PJRT_Buffer_Type_F32, v, d4, 1);
      } else {
        OK(e);
        await_ok(done);
      }
      download(b, got, sizeof got);
      assert_memory_equal(got, v, sizeof v);
      buffer_destroy(b);
      client_destroy(c);
    }
  }
}

/* ======================================================================
 * 12. CompileOptionsProto decoding: malformed bytes and skipped fields
 * ==================================================================== */

/* Each case: the options bytes, and the code (0: accepted) with a message
 * fragment; the byte offsets are counted by hand. */
static void test_compile_options_proto(void **state) {
  host_fixture *f = *state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  int id1 = device_id(f->d[1]), id2 = device_id(f->d[2]);
  assert_true(id1 >= 0 && id1 < 128 && id2 >= 0 && id2 < 128);
  uint8_t u1 = (uint8_t)id1, u2 = (uint8_t)id2;
  static uint8_t deep[70];
  memset(deep, 0x0b, sizeof deep);
  struct {
    const char *what;
    const uint8_t *b;
    size_t n;
    int code;
    const char *msg;
    PJRT_Device *placed; /* accepted: the one device it runs on */
  } cases[] = {
#define B(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})
      {"varint of 11 bytes",
       B(0x28, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80),
       IA, "a varint is longer than 10 bytes (at byte 11 of 11)", NULL},
      {"field 0", B(0x00), IA,
       "a field number is out of range (at byte 1 of 1)", NULL},
      {"wire type 6", B(0x0e), IA, "an unknown wire type (at byte 1 of 1)",
       NULL},
      {"fixed64 cut", B(0x09, 1, 2, 3), IA,
       "a fixed-size value runs past the end (at byte 1 of 4)", NULL},
      {"fixed64 and fixed32 skipped",
       B(0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0x0d, 1, 2, 3, 4), 0, NULL, NULL},
      {"a group skipped", B(0x0b, 0x10, 0x01, 0x0c), 0, NULL, NULL},
      {"a group ended by another field", B(0x0b, 0x14), IA,
       "a group ends with another field (at byte 2 of 2)", NULL},
      {"a group without end", B(0x0b, 0x10, 0x01), IA,
       "a group has no end (at byte 3 of 3)", NULL},
      {"an end group alone", B(0x0c), IA,
       "a group end without its start (at byte 1 of 1)", NULL},
      {"groups 70 deep", deep, sizeof deep, IA,
       "groups nest too deep (at byte 66 of 70)", NULL},
      {"length past the end", B(0x1a, 0x05, 0x00), IA,
       "a length runs past the end (at byte 2 of 3)", NULL},
      {"compile_portable_executable cut", B(0x20), IA,
       "a varint runs past the end (at byte 1 of 1)", NULL},
      {"compile_portable_executable false", B(0x20, 0x00), 0, NULL, NULL},
      {"num_replicas cut", B(0x1a, 0x01, 0x20), IA,
       "a varint runs past the end (at byte 3 of 3)", NULL},
      {"device_assignment cut", B(0x1a, 0x02, 0x4a, 0x05), IA,
       "a length runs past the end (at byte 4 of 4)", NULL},
      {"build options: a bad key", B(0x1a, 0x01, 0x0e), IA,
       "an unknown wire type (at byte 3 of 3)", NULL},
      {"num_replicas -1",
       B(0x1a, 0x0b, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
         0xff, 0x01),
       IA, "num_replicas -1, num_partitions 0", NULL},
      {"an empty device assignment", B(0x1a, 0x02, 0x4a, 0x00), IA,
       "the device assignment has replica_count 0, computation_count 0 and "
       "0 computation_devices", NULL},
      {"2 computation_devices for computation_count 1",
       B(0x1a, 0x0a, 0x4a, 0x08, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x00, 0x1a,
         0x00),
       IA, "replica_count 1, computation_count 1 and 2 computation_devices",
       NULL},
      {"replica_count 100 in 6 bytes",
       B(0x1a, 0x08, 0x4a, 0x06, 0x08, 0x64, 0x10, 0x01, 0x1a, 0x00), IA,
       "replica_count 100, computation_count 1 and 1 computation_devices",
       NULL},
      {"1 id for 2 replicas",
       B(0x1a, 0x0a, 0x4a, 0x08, 0x08, 0x02, 0x10, 0x01, 0x1a, 0x02, 0x08,
         0x00),
       IA, "device assignment: a computation_devices entry does not list "
           "replica_count ids", NULL},
      {"an id of -1",
       B(0x1a, 0x13, 0x4a, 0x11, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x0b, 0x08,
         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
       IA, "a replica_device_id is out of range (at byte 21 of 21)", NULL},
      {"a packed id cut",
       B(0x1a, 0x0b, 0x4a, 0x09, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x03, 0x0a,
         0x01, 0x80),
       IA, "a varint runs past the end (at byte 13 of 13)", NULL},
      {"a bad key in a device assignment", B(0x1a, 0x03, 0x4a, 0x01, 0x00),
       IA, "a field number is out of range (at byte 5 of 5)", NULL},
      {"a bad key in computation_devices",
       B(0x1a, 0x09, 0x4a, 0x07, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x01, 0x0e),
       IA, "an unknown wire type (at byte 11 of 11)", NULL},
      {"field number 2^29", B(0x80, 0x80, 0x80, 0x80, 0x10), IA,
       "a field number is out of range (at byte 5 of 5)", NULL},
      {"a length without its varint", B(0x1a), IA,
       "a varint runs past the end (at byte 1 of 1)", NULL},
      {"a bad key in a group", B(0x0b, 0x0e), IA,
       "an unknown wire type (at byte 2 of 2)", NULL},
      {"an id of 2^31",
       B(0x1a, 0x0e, 0x4a, 0x0c, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x06, 0x08,
         0x80, 0x80, 0x80, 0x80, 0x08),
       IA, "a replica_device_id is out of range (at byte 16 of 16)", NULL},
      {"replica_count cut", B(0x1a, 0x03, 0x4a, 0x01, 0x08), IA,
       "a varint runs past the end (at byte 5 of 5)", NULL},
      {"replica_count as bytes (skipped)", B(0x1a, 0x04, 0x4a, 0x02, 0x0a, 0x00),
       IA, "replica_count 0, computation_count 0 and 0 computation_devices",
       NULL},
      {"computation_devices cut", B(0x1a, 0x04, 0x4a, 0x02, 0x1a, 0x05), IA,
       "a length runs past the end (at byte 6 of 6)", NULL},
      {"2 ids for 1 replica",
       B(0x1a, 0x0c, 0x4a, 0x0a, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x04, 0x08,
         u1, 0x08, u2),
       IA, "a computation_devices entry does not list replica_count ids",
       NULL},
      {"a packed id list past the end",
       B(0x1a, 0x0a, 0x4a, 0x08, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x02, 0x0a,
         0x05),
       IA, "a length runs past the end (at byte 12 of 12)", NULL},
      {"a fixed64 cut in a device assignment",
       B(0x1a, 0x05, 0x4a, 0x03, 0x09, 0x01, 0x02), IA,
       "a fixed-size value runs past the end (at byte 5 of 7)", NULL},
      {"computation_count 0", B(0x1a, 0x06, 0x4a, 0x04, 0x08, 0x01, 0x1a,
                                0x00),
       IA, "replica_count 1, computation_count 0 and 1 computation_devices",
       NULL},
      {"num_partitions -1",
       B(0x1a, 0x0b, 0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
         0xff, 0x01),
       IA, "num_replicas 0, num_partitions -1", NULL},
      {"num_replicas 2^31", B(0x1a, 0x06, 0x20, 0x80, 0x80, 0x80, 0x80, 0x08),
       IA, "num_replicas 2147483648, num_partitions 0", NULL},
      {"num_partitions 2^31",
       B(0x1a, 0x06, 0x28, 0x80, 0x80, 0x80, 0x80, 0x08), IA,
       "num_replicas 0, num_partitions 2147483648", NULL},
      {"a fixed64 cut in computation_devices",
       B(0x1a, 0x0a, 0x4a, 0x08, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x02, 0x09,
         0x01),
       IA, "a fixed-size value runs past the end (at byte 11 of 12)", NULL},
      {"a fixed64 cut in build options", B(0x1a, 0x02, 0x09, 0x01), IA,
       "a fixed-size value runs past the end (at byte 3 of 4)", NULL},
      /* known field numbers of another wire type are skipped */
      {"fields of unexpected wire types",
       B(0x18, 0x01, 0x22, 0x00, 0x1a, 0x04, 0x22, 0x00, 0x48, 0x01), 0,
       NULL, NULL},
      {"an id as a fixed64 (skipped), then as a varint",
       B(0x1a, 0x13, 0x4a, 0x11, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x0b, 0x09,
         1, 2, 3, 4, 5, 6, 7, 8, 0x08, u1),
       0, NULL, f->d[1]},
      {"computation_devices as a varint (skipped)",
       B(0x1a, 0x0c, 0x4a, 0x0a, 0x08, 0x01, 0x10, 0x01, 0x18, 0x05, 0x1a,
         0x02, 0x08, u2),
       0, NULL, f->d[2]},
      /* unknown fields skipped at every level; the id after them */
      {"unknown fields around one id",
       B(0x1a, 0x0e, 0x4a, 0x0c, 0x08, 0x01, 0x10, 0x01, 0x28, 0x07, 0x1a,
         0x04, 0x10, 0x05, 0x08, u1, 0x20, 0x01),
       0, NULL, f->d[1]},
      /* two device assignments: the last one counts */
      {"two device assignments",
       B(0x1a, 0x14, 0x4a, 0x08, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x02, 0x08,
         u1, 0x4a, 0x08, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x02, 0x08, u2),
       0, NULL, f->d[2]},
#undef B
  };
  for (size_t k = 0; k < COUNT(cases); k++) {
    PJRT_LoadedExecutable *x = NULL;
    PJRT_Error *e = compile(f->c, k_add, "mlir", cases[k].b, cases[k].n, &x);
    if (cases[k].code) {
      if (!e) fail_msg("case \"%s\" accepted", cases[k].what);
      char m[1024];
      int c = err_code(e);
      err_text(e, m, sizeof m);
      err_destroy(e);
      if (c != cases[k].code || !strstr(m, cases[k].msg))
        fail_msg("case \"%s\": %s (%d) \"%s\"; want %s with \"%s\"",
                 cases[k].what, code_name(c), c, m, code_name(cases[k].code),
                 cases[k].msg);
      assert_null(x);
      continue;
    }
    if (e) {
      char m[1024];
      err_text(e, m, sizeof m);
      err_destroy(e);
      fail_msg("case \"%s\" refused: %s", cases[k].what, m);
    }
    if (cases[k].placed) {
      ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
      ad.executable = x;
      OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
      assert_int_equal(ad.num_addressable_devices, 1);
      assert_ptr_equal(ad.addressable_devices[0], cases[k].placed);
    }
    loaded_destroy(x);
  }
  /* compile_options NULL with a size */
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)k_add;
  prog.code_size = strlen(k_add);
  prog.format = "mlir";
  prog.format_size = 4;
  ARGS(PJRT_Client_Compile_Args, a);
  a.client = f->c;
  a.program = &prog;
  a.compile_options_size = 3;
  EXPECT_ERR(API->PJRT_Client_Compile(&a), IA, "args->compile_options");
  assert_null(a.executable);
}

/* ======================================================================
 * 13. Every entry with a NULL args pointer, a struct_size too small, and
 *     args of the right size but every field zero
 * ==================================================================== */

/* Entries that may succeed on zeroed args (NULL objects are no-ops for a
 * Destroy; the others need no object): left out of the zero-field pass. */
static const char *const k_zero_ok[] = {
    "PJRT_Plugin_Initialize", "PJRT_Plugin_Attributes", "PJRT_Client_Create",
    "PJRT_Client_Destroy", "PJRT_Buffer_Destroy", "PJRT_Event_Destroy",
    "PJRT_Executable_Destroy", "PJRT_LoadedExecutable_Destroy",
    "PJRT_ExecuteContext_Create", "PJRT_ExecuteContext_Destroy",
    "PJRT_TopologyDescription_Create", "PJRT_TopologyDescription_Destroy",
    "PJRT_CopyToDeviceStream_Destroy",
    "PJRT_AsyncHostToDeviceTransferManager_Destroy"};

static bool zero_may_succeed(const char *fn) {
  for (size_t i = 0; i < COUNT(k_zero_ok); i++)
    if (!strcmp(fn, k_zero_ok[i])) return true;
  return false;
}

/* e must be an INVALID_ARGUMENT or UNIMPLEMENTED error naming fn (with
 * `sub` in it when the entry is implemented). */
static void sweep_check(PJRT_Error *e, const char *fn, const char *pass,
                        const char *sub) {
  if (!e) fail_msg("%s (%s): succeeded", fn, pass);
  char m[1024];
  int c = err_code(e);
  err_text(e, m, sizeof m);
  err_destroy(e);
  if (c == PJRT_Error_Code_UNIMPLEMENTED) {
    if (!strstr(m, fn)) fail_msg("%s (%s): \"%s\" does not name it", fn, pass, m);
    return;
  }
  if (c != PJRT_Error_Code_INVALID_ARGUMENT)
    fail_msg("%s (%s): %s (%d): %s", fn, pass, code_name(c), c, m);
  if (!strstr(m, fn)) fail_msg("%s (%s): \"%s\" does not name it", fn, pass, m);
  if (sub && !strstr(m, sub))
    fail_msg("%s (%s): \"%s\" lacks \"%s\"", fn, pass, m, sub);
}

/* A handle value no object of the plugin has (plugin handles are slot
 * numbers with a generation, never dereferenced). */
#define k_bogus_handle \
  ((void *)((uintptr_t)1 | ((uintptr_t)0x5a5a << (sizeof(void *) * 8 - 16))))

/* One function per entry, with the entry's own args type. */
#define SWEEP_FN(f)                                                         \
  static void sweep_one_##f(void) {                                         \
    static union {                                                          \
      f##_Args a;                                                           \
      size_t struct_size;                                                   \
      unsigned char pad[sizeof(f##_Args) + 16];                             \
    } z;                                                                    \
    sweep_check(API->f(NULL), #f, "NULL args", "args is NULL");             \
    memset(&z, 0, sizeof z);                                                \
    z.struct_size = 1;                                                      \
    sweep_check(API->f(&z.a), #f, "struct_size 1",                          \
                "args->struct_size is 1,");                                 \
    if (zero_may_succeed(#f)) return;                                       \
    memset(&z, 0, sizeof z);                                                \
    z.struct_size = f##_Args_STRUCT_SIZE;                                   \
    sweep_check(API->f(&z.a), #f, "fields zero", "is NULL");                \
    if (!strcmp(#f, "PJRT_Error_GetCode")) return; /* errors: pointers */   \
    /* the first field (the object) a handle the plugin never made */      \
    void *bogus = k_bogus_handle;                                           \
    size_t at = offsetof(f##_Args, extension_start) + sizeof(void *);       \
    if (at + sizeof bogus > f##_Args_STRUCT_SIZE) return;                   \
    memcpy(z.pad + at, &bogus, sizeof bogus);                               \
    sweep_check(API->f(&z.a), #f, "bogus object", "is not a live");         \
  }
PJRT_FNS_ERR(SWEEP_FN)
#undef SWEEP_FN

static void test_entry_sweep(void **state) {
  (void)state;
#define SWEEP_CALL(f) sweep_one_##f();
  PJRT_FNS_ERR(SWEEP_CALL)
#undef SWEEP_CALL
}

/* ======================================================================
 * 14. The one-device dispatch path and what sends a call past it
 * ==================================================================== */

/* "func.func @main" with n f32 scalar arguments returning a0 + a(n-1), or
 * (wide_out) one argument returned n times. */
static char *wide_program(int n, int wide_out) {
  size_t cap = 8192;
  char *p = malloc(cap);
  assert_non_null(p);
  size_t k = 0;
  k += (size_t)snprintf(p + k, cap - k, "func.func @main(");
  if (wide_out) {
    k += (size_t)snprintf(p + k, cap - k, "%%a0: tensor<f32>) -> (");
    for (int i = 0; i < n; i++)
      k += (size_t)snprintf(p + k, cap - k, "%stensor<f32>", i ? ", " : "");
    k += (size_t)snprintf(p + k, cap - k, ") {\n  return ");
    for (int i = 0; i < n; i++)
      k += (size_t)snprintf(p + k, cap - k, "%s%%a0", i ? ", " : "");
    k += (size_t)snprintf(p + k, cap - k, " : ");
    for (int i = 0; i < n; i++)
      k += (size_t)snprintf(p + k, cap - k, "%stensor<f32>", i ? ", " : "");
    snprintf(p + k, cap - k, "\n}\n");
    return p;
  }
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(p + k, cap - k, "%s%%a%d: tensor<f32>", i ? ", " : "",
                          i);
  snprintf(p + k, cap - k,
           ") -> tensor<f32> {\n"
           "  %%0 = stablehlo.add %%a0, %%a%d : tensor<f32>\n"
           "  return %%0 : tensor<f32>\n}\n",
           n - 1);
  return p;
}

static void test_dispatch_fallbacks(void **state) {
  host_fixture *f = *state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  PJRT_Client *c = f->c;
  PJRT_LoadedExecutable *x = compile_ok(c, k_add, NULL, 0);
  ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
  ad.executable = x;
  OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
  PJRT_Device *dev = ad.addressable_devices[0];
  const int64_t d4[1] = {4};
  const float a[4] = {1, 2, 3, 4}, want[4] = {2, 4, 6, 8};
  PJRT_Buffer *in = upload(c, dev, PJRT_Buffer_Type_F32, a, d4, 1);
  PJRT_Buffer *args[2] = {in, in}, *out[1];
  PJRT_Event *ev[2];
  float got[4];

  /* callbacks given with no ops: nothing to refuse */
  {
    PJRT_ExecuteOptions opt;
    exec_options(&opt, 3);
    PJRT_SendCallbackInfo *none[1] = {NULL};
    opt.send_callbacks = none;
    opt.recv_callbacks = (PJRT_RecvCallbackInfo **)none;
    OK(execute_opts(x, 1, 2, args, 1, out, NULL, NULL, &opt));
    download(out[0], got, sizeof got);
    assert_memory_equal(got, want, sizeof want);
    buffer_destroy(out[0]);
  }
  /* no options at all: the dispatch path */
  OK(execute_opts(x, 1, 2, args, 1, out, ev, NULL, NULL));
  await_ok(ev[0]);
  download(out[0], got, sizeof got);
  assert_memory_equal(got, want, sizeof want);
  buffer_destroy(out[0]);
  /* argument_lists[0] NULL, output_lists[0] NULL, no argument_lists */
  {
    PJRT_Buffer **ol[1] = {out};
    PJRT_Buffer *const *al[1] = {NULL};
    ARGS(PJRT_LoadedExecutable_Execute_Args, e);
    e.executable = x;
    e.num_devices = 1;
    e.num_args = 2;
    e.argument_lists = al;
    e.output_lists = ol;
    EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(&e), IA,
               "argument_lists[0] is NULL");
    al[0] = args;
    ol[0] = NULL;
    EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(&e), IA,
               "output_lists[0] is NULL");
    ol[0] = out;
    e.argument_lists = NULL;
    EXPECT_ERR(API->PJRT_LoadedExecutable_Execute(&e), IA,
               "args->argument_lists is NULL");
    /* struct_size without execute_device (an older host): accepted */
    e.argument_lists = al;
    e.struct_size =
        offsetof(PJRT_LoadedExecutable_Execute_Args, device_complete_events) +
        sizeof(PJRT_Event **);
    e.device_complete_events = ev;
    e.execute_device = f->d[3]; /* beyond struct_size: not read */
    OK(API->PJRT_LoadedExecutable_Execute(&e));
    await_ok(ev[0]);
    assert_ptr_equal(buffer_device(out[0]), dev);
    buffer_destroy(out[0]);
  }
  /* execute_device of another client, of a destroyed client; two lists */
  {
    PJRT_Client *c2 = new_client(2);
    PJRT_Device *d2[2];
    get_devices(c2, d2, 2);
    EXPECT_ERR(execute(x, 1, 2, args, 1, out, ev, d2[1]), IA,
               "execute_device belongs to another client");
    client_destroy(c2);
    EXPECT_ERR(execute(x, 1, 2, args, 1, out, ev, d2[1]), IA,
               "args->execute_device is not a live PJRT_Device");
    PJRT_Buffer *four[4] = {in, in, in, in}, *out2[2];
    EXPECT_ERR(execute(x, 2, 2, four, 1, out2, ev, dev), IA,
               "with execute_device, num_devices must be 1, not 2");
  }
  /* a deleted argument, a buffer of the wrong kind of handle */
  {
    PJRT_Buffer *gone = upload(c, dev, PJRT_Buffer_Type_F32, a, d4, 1);
    ARGS(PJRT_Buffer_Delete_Args, del);
    del.buffer = gone;
    OK(API->PJRT_Buffer_Delete(&del));
    PJRT_Buffer *dead[2] = {in, gone};
    EXPECT_ERR(execute(x, 1, 2, dead, 1, out, ev, NULL), IA,
               "argument_lists[0][1] is a deleted PJRT_Buffer");
    PJRT_Buffer *odd[2] = {(PJRT_Buffer *)dev, in};
    EXPECT_ERR(execute(x, 1, 2, odd, 1, out, ev, NULL), IA,
               "argument_lists[0][0] is not a live PJRT_Buffer");
    buffer_destroy(gone);
  }
  /* an xrt failure on the dispatch path: a buffer of the wrong shape */
  {
    const int64_t d2[1] = {2};
    PJRT_Buffer *small = upload(c, dev, PJRT_Buffer_Type_F32, a, d2, 1);
    PJRT_Buffer *bad[2] = {in, small};
    EXPECT_ERR(execute(x, 1, 2, bad, 1, out, ev, NULL), IA,
               "PJRT_LoadedExecutable_Execute: ");
    assert_null(out[0]);
    buffer_destroy(small);
  }
  buffer_destroy(in);
  loaded_destroy(x);

  /* 17 arguments, then 17 outputs: past the dispatch path's 16 */
  {
    char *src = wide_program(17, 0);
    x = compile_ok(c, src, NULL, 0);
    free(src);
    ad.executable = x;
    OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
    dev = ad.addressable_devices[0];
    PJRT_Buffer *many[17], *o1[1];
    float vals[17];
    for (int i = 0; i < 17; i++) {
      vals[i] = (float)(i * 3) + 0.5f;
      many[i] = upload(c, dev, PJRT_Buffer_Type_F32, &vals[i], NULL, 0);
    }
    execute_ok(x, 1, 17, many, 1, o1);
    float s = 0;
    download(o1[0], &s, sizeof s);
    assert_true(s == vals[0] + vals[16]);
    buffer_destroy(o1[0]);
    /* the same without completion events, and on another device */
    OK(execute(x, 1, 17, many, 1, o1, NULL, NULL));
    s = 0;
    download(o1[0], &s, sizeof s);
    assert_true(s == vals[0] + vals[16]);
    buffer_destroy(o1[0]);
    {
      PJRT_Device *other = dev == f->d[3] ? f->d[2] : f->d[3];
      PJRT_Buffer *there[17];
      for (int i = 0; i < 17; i++)
        there[i] = upload(c, other, PJRT_Buffer_Type_F32, &vals[i], NULL, 0);
      OK(execute(x, 1, 17, there, 1, o1, ev, other));
      await_ok(ev[0]);
      assert_ptr_equal(buffer_device(o1[0]), other);
      s = 0;
      download(o1[0], &s, sizeof s);
      assert_true(s == vals[0] + vals[16]);
      buffer_destroy(o1[0]);
      for (int i = 0; i < 17; i++) buffer_destroy(there[i]);
    }
    /* on the general path, an xrt failure: a rank-1 argument */
    PJRT_Buffer *r1 = upload(c, dev, PJRT_Buffer_Type_F32, a, d4, 1);
    PJRT_Buffer *keep = many[5];
    many[5] = r1;
    EXPECT_ERR(execute(x, 1, 17, many, 1, o1, ev, NULL), IA, NULL);
    assert_null(o1[0]);
    many[5] = keep;
    buffer_destroy(r1);
    for (int i = 0; i < 17; i++) buffer_destroy(many[i]);
    loaded_destroy(x);

    src = wide_program(17, 1);
    x = compile_ok(c, src, NULL, 0);
    free(src);
    ad.executable = x;
    OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
    dev = ad.addressable_devices[0];
    const float v = -7.25f;
    PJRT_Buffer *one = upload(c, dev, PJRT_Buffer_Type_F32, &v, NULL, 0);
    PJRT_Buffer *o17[17];
    execute_ok(x, 1, 1, &one, 17, o17);
    for (int i = 0; i < 17; i++) {
      float g = 0;
      download(o17[i], &g, sizeof g);
      assert_true(g == v);
      buffer_destroy(o17[i]);
    }
    buffer_destroy(one);
    loaded_destroy(x);
  }
}

/* A program without arguments: no argument lists needed. */
static void test_no_arguments(void **state) {
  host_fixture *f = *state;
  PJRT_LoadedExecutable *x = compile_ok(
      f->c,
      "func.func @main() -> tensor<2xf32> {\n"
      "  %0 = stablehlo.constant dense<[2.5, -1.0]> : tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n",
      NULL, 0);
  PJRT_Buffer *out[1] = {NULL};
  PJRT_Buffer **ol[1] = {out};
  PJRT_Event *ev[1] = {NULL};
  ARGS(PJRT_LoadedExecutable_Execute_Args, a);
  a.executable = x;
  a.num_devices = 1;
  a.output_lists = ol;
  a.device_complete_events = ev;
  OK(API->PJRT_LoadedExecutable_Execute(&a));
  await_ok(ev[0]);
  float got[2] = {0, 0};
  download(out[0], got, sizeof got);
  assert_true(got[0] == 2.5f && got[1] == -1.0f);
  buffer_destroy(out[0]);
  /* its PJRT_Executable destroyed twice */
  PJRT_Executable *e = get_executable(x);
  executable_destroy(e);
  ARGS(PJRT_Executable_Destroy_Args, ed);
  ed.executable = e;
  EXPECT_ERR(API->PJRT_Executable_Destroy(&ed),
             PJRT_Error_Code_INVALID_ARGUMENT,
             "args->executable is not a live PJRT_Executable");
  loaded_destroy(x);
}

/* PJRT_Error objects themselves: NULL, too small, destroyed. */
static void test_error_objects(void **state) {
  (void)state;
  PJRT_Error *e = API->PJRT_Client_PlatformName(NULL);
  assert_non_null(e);
  /* Destroy and Message with no args or too small ones: nothing happens */
  API->PJRT_Error_Destroy(NULL);
  ARGS(PJRT_Error_Destroy_Args, small);
  small.struct_size = 1;
  small.error = e;
  API->PJRT_Error_Destroy(&small);
  assert_int_equal(err_code(e), PJRT_Error_Code_INVALID_ARGUMENT);
  API->PJRT_Error_Message(NULL);
  ARGS(PJRT_Error_Message_Args, ms);
  ms.struct_size = 1;
  ms.error = e;
  ms.message = "unchanged";
  API->PJRT_Error_Message(&ms);
  assert_string_equal(ms.message, "unchanged");
  /* the message of no error is empty */
  ARGS(PJRT_Error_Message_Args, mn);
  mn.message = "x";
  mn.message_size = 1;
  API->PJRT_Error_Message(&mn);
  assert_int_equal(mn.message_size, 0);
  /* a destroyed error: its message says so, GetCode refuses it */
  err_destroy(e);
  char m[256];
  err_text(e, m, sizeof m);
  assert_string_equal(m, "invalid PJRT_Error (destroyed, or not from this "
                         "plugin)");
  ARGS(PJRT_Error_GetCode_Args, gc);
  gc.error = e;
  EXPECT_ERR(API->PJRT_Error_GetCode(&gc), PJRT_Error_Code_INVALID_ARGUMENT,
             "args->error is not a live PJRT_Error");
  /* destroying it again is ignored */
  err_destroy(e);
}

/* ======================================================================
 * 15. Failing participants, events that carry the failure; objects that
 *     outlive their client
 * ==================================================================== */

static void test_participant_faults(void **state) {
  (void)state;
  PJRT_NamedValue o[3] = {nv_int("num_devices", 2),
                          nv_int("inject_fault_device", 1),
                          nv_int("inject_fault_after", 0)};
  PJRT_Client *c = NULL;
  OK(create_with(o, 3, &c));
  PJRT_Device *d[2];
  get_devices(c, d, 2);
  int64_t ids[2] = {device_id(d[0]), device_id(d[1])};
  pb_buf po;
  pb_compile_options(&po, 2, 1, ids);
  PJRT_LoadedExecutable *x = compile_ok(c, k_add, po.b, po.n);
  const int64_t d4[1] = {4};
  const float v[4] = {1, 2, 3, 4};
  PJRT_Buffer *in[2], *out[2];
  PJRT_Event *ev[2];
  on_ready_rec rec[2], late[2];
  for (int r = 0; r < 2; r++)
    in[r] = upload(c, d[r], PJRT_Buffer_Type_F32, v, d4, 1);
  PJRT_ExecuteOptions opt;
  exec_options(&opt, 77);
  for (int r = 0; r < 2; r++) {
    PJRT_Buffer *args[2] = {in[r], in[r]};
    OK(execute_opts(x, 1, 2, args, 1, &out[r], &ev[r], d[r], &opt));
    memset(&rec[r], 0, sizeof rec[r]);
    pthread_mutex_init(&rec[r].mu, NULL);
    ARGS(PJRT_Event_OnReady_Args, on);
    on.event = ev[r];
    on.callback = part_ready_cb;
    on.user_arg = &rec[r];
    OK(API->PJRT_Event_OnReady(&on));
  }
  /* replica 0 runs; replica 1 (device 1) meets the fault */
  ARGS(PJRT_Event_Await_Args, w);
  w.event = ev[0];
  OK(API->PJRT_Event_Await(&w));
  w.event = ev[1];
  PJRT_Error *e = API->PJRT_Event_Await(&w);
  assert_non_null(e);
  int code = err_code(e);
  err_destroy(e);
  assert_int_not_equal(code, 0);
  ARGS(PJRT_Event_Error_Args, ee);
  ee.event = ev[1];
  e = API->PJRT_Event_Error(&ee);
  assert_non_null(e);
  assert_int_equal(err_code(e), code);
  err_destroy(e);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(on_ready_wait(&rec[r]), 1);
    assert_int_equal(rec[r].code, r ? code : 0);
    pthread_mutex_destroy(&rec[r].mu);
    /* OnReady once the event is ready: at once, the same outcome */
    memset(&late[r], 0, sizeof late[r]);
    pthread_mutex_init(&late[r].mu, NULL);
    ARGS(PJRT_Event_OnReady_Args, on);
    on.event = ev[r];
    on.callback = part_ready_cb;
    on.user_arg = &late[r];
    OK(API->PJRT_Event_OnReady(&on));
    assert_int_equal(late[r].fired, 1);
    assert_int_equal(late[r].code, r ? code : 0);
    pthread_mutex_destroy(&late[r].mu);
    ARGS(PJRT_Event_IsReady_Args, ir);
    ir.event = ev[r];
    OK(API->PJRT_Event_IsReady(&ir));
    assert_true(ir.is_ready);
    event_destroy(ev[r]);
  }
  float got[4];
  download(out[0], got, sizeof got);
  for (int i = 0; i < 4; i++) assert_true(got[i] == 2 * v[i]);
  for (int r = 0; r < 2; r++) {
    buffer_destroy(out[r]);
    buffer_destroy(in[r]);
  }
  /* an OnReady without a callback */
  ARGS(PJRT_Buffer_ReadyEvent_Args, re);
  PJRT_Buffer *b = upload(c, d[0], PJRT_Buffer_Type_F32, v, d4, 1);
  re.buffer = b;
  OK(API->PJRT_Buffer_ReadyEvent(&re));
  ARGS(PJRT_Event_OnReady_Args, on);
  on.event = re.event;
  EXPECT_ERR(API->PJRT_Event_OnReady(&on), PJRT_Error_Code_INVALID_ARGUMENT,
             "args->callback is NULL");
  await_ok(re.event);
  buffer_destroy(b);
  loaded_destroy(x);
  /* destroyed twice */
  ARGS(PJRT_LoadedExecutable_Destroy_Args, ld);
  ld.executable = x;
  EXPECT_ERR(API->PJRT_LoadedExecutable_Destroy(&ld),
             PJRT_Error_Code_INVALID_ARGUMENT,
             "args->executable is not a live PJRT_LoadedExecutable");
  client_destroy(c);
}

/* An executable and buffers used after their client is destroyed. */
static void test_after_client_destroy(void **state) {
  (void)state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  PJRT_Client *c = new_client(NDEV);
  PJRT_Device *d[NDEV];
  PJRT_LoadedExecutable *xm = compile_allreduce(c, d);
  PJRT_LoadedExecutable *x1 = compile_ok(c, k_add, NULL, 0);
  ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
  ad.executable = x1;
  OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
  int dev1 = -1;
  for (int i = 0; i < NDEV; i++)
    if (ad.addressable_devices[0] == d[i]) dev1 = i;
  assert_true(dev1 >= 0);
  const int64_t d4[1] = {4};
  const float v[4] = {1, 2, 3, 4};
  PJRT_Buffer *in[NDEV], *outs[NDEV * 2];
  PJRT_Event *evs[NDEV];
  for (int r = 0; r < NDEV; r++)
    in[r] = upload(c, d[r], PJRT_Buffer_Type_F32, v, d4, 1);
  client_destroy(c);
  /* (xrt released the executable with its client: xrt says so) */
  EXPECT_ERR(execute(xm, NDEV, 1, in, 2, outs, evs, NULL), IA,
             "invalid or released executable");
  for (int i = 0; i < NDEV * 2; i++) assert_null(outs[i]);
  PJRT_Buffer *two[2] = {in[dev1], in[dev1]};
  EXPECT_ERR(execute(x1, 1, 2, two, 1, outs, evs, NULL), IA,
             "the executable's client has been destroyed");
  /* the buffers still know their shape, not their device */
  check_buffer_shape(in[0], PJRT_Buffer_Type_F32, d4, 1);
  ARGS(PJRT_Buffer_Device_Args, bd);
  bd.buffer = in[0];
  EXPECT_ERR(API->PJRT_Buffer_Device(&bd), IA,
             "the buffer's client has been destroyed");
  ARGS(PJRT_Buffer_Memory_Args, bm);
  bm.buffer = in[0];
  EXPECT_ERR(API->PJRT_Buffer_Memory(&bm), IA,
             "the buffer's client has been destroyed");
  {
    /* a copy from it: its own device is gone (the destination too) */
    PJRT_Client *c2 = new_client(2);
    PJRT_Device *e2[2];
    get_devices(c2, e2, 2);
    ARGS(PJRT_Buffer_CopyToDevice_Args, cp);
    cp.buffer = in[0];
    cp.dst_device = e2[1];
    EXPECT_ERR(API->PJRT_Buffer_CopyToDevice(&cp), IA,
               "the buffer's client has been destroyed");
    client_destroy(c2);
  }
  /* reading it back: xrt released the buffer with its client */
  {
    float got[4];
    ARGS(PJRT_Buffer_ToHostBuffer_Args, th);
    th.src = in[1];
    th.dst = got;
    th.dst_size = sizeof got;
    EXPECT_ERR(API->PJRT_Buffer_ToHostBuffer(&th), IA,
               "PJRT_Buffer_ToHostBuffer: xrt_buffer_to_host: invalid or "
               "released buffer");
    ARGS(PJRT_Buffer_ReadyEvent_Args, re);
    re.buffer = in[1];
    EXPECT_ERR(API->PJRT_Buffer_ReadyEvent(&re), IA, "PJRT_Buffer_ReadyEvent");
  }
  /* Delete twice: the second finds nothing to release */
  ARGS(PJRT_Buffer_Delete_Args, del);
  del.buffer = in[2];
  OK(API->PJRT_Buffer_Delete(&del));
  OK(API->PJRT_Buffer_Delete(&del));
  for (int r = 0; r < NDEV; r++) buffer_destroy(in[r]);
  loaded_destroy(xm);
  loaded_destroy(x1);
}

/* DefaultDeviceAssignment's limits; an ExecuteContext destroyed twice. */
static void test_assignment_and_context(void **state) {
  host_fixture *f = *state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  int da[8];
  ARGS(PJRT_Client_DefaultDeviceAssignment_Args, a);
  a.client = f->c;
  a.num_replicas = 2;
  a.num_partitions = 2;
  a.default_assignment = da;
  a.default_assignment_size = 8;
  for (int i = 0; i < 8; i++) da[i] = -1;
  OK(API->PJRT_Client_DefaultDeviceAssignment(&a));
  for (int i = 0; i < 4; i++) assert_int_equal(da[i], i);
  assert_int_equal(da[4], -1);
  a.num_partitions = 3;
  EXPECT_ERR(API->PJRT_Client_DefaultDeviceAssignment(&a), IA,
             "2 replica(s) x 3 partition(s) do not fit the client's 4 "
             "device(s)");
  a.num_partitions = 0;
  EXPECT_ERR(API->PJRT_Client_DefaultDeviceAssignment(&a), IA,
             "2 replica(s) x 0 partition(s)");
  a.num_partitions = 1;
  a.num_replicas = 0;
  EXPECT_ERR(API->PJRT_Client_DefaultDeviceAssignment(&a), IA,
             "0 replica(s) x 1 partition(s)");
  a.num_replicas = 4;
  a.default_assignment_size = 3;
  EXPECT_ERR(API->PJRT_Client_DefaultDeviceAssignment(&a), IA,
             "default_assignment_size is 3, 4 needed");
  a.default_assignment_size = 4;
  a.default_assignment = NULL;
  EXPECT_ERR(API->PJRT_Client_DefaultDeviceAssignment(&a), IA,
             "args->default_assignment is NULL");

  /* lookups of devices the client does not have */
  ARGS(PJRT_Client_LookupDevice_Args, lk);
  lk.client = f->c;
  lk.id = -1;
  EXPECT_ERR(API->PJRT_Client_LookupDevice(&lk), IA,
             "no device -1 (the client has devices 0..3)");
  lk.id = 4;
  EXPECT_ERR(API->PJRT_Client_LookupDevice(&lk), IA, "no device 4");
  lk.id = 2;
  OK(API->PJRT_Client_LookupDevice(&lk));
  assert_int_equal(device_id(lk.device), 2);
  ARGS(PJRT_Client_LookupAddressableDevice_Args, la);
  la.client = f->c;
  la.local_hardware_id = 9;
  EXPECT_ERR(API->PJRT_Client_LookupAddressableDevice(&la), IA,
             "PJRT_Client_LookupAddressableDevice: no device 9");

  ARGS(PJRT_ExecuteContext_Create_Args, cc);
  if (OK_OR_UNIMPL(API->PJRT_ExecuteContext_Create(&cc),
                   "PJRT_ExecuteContext_Create")) {
    ARGS(PJRT_ExecuteContext_Destroy_Args, cd);
    cd.context = cc.context;
    OK(API->PJRT_ExecuteContext_Destroy(&cd));
    EXPECT_ERR(API->PJRT_ExecuteContext_Destroy(&cd), IA,
               "args->context is not a live PJRT_ExecuteContext");
  }
}

/* A result of a type PJRT 0.60 has no name for (f8E8M0FNU): reported as
 * INVALID, its bytes still readable. */
static void test_unnamed_output_type(void **state) {
  host_fixture *f = *state;
  PJRT_LoadedExecutable *x = compile_ok(
      f->c,
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {\n"
      "  %0 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>\n"
      "  return %0 : tensor<4xf8E8M0FNU>\n"
      "}\n",
      NULL, 0);
  PJRT_Executable *e = get_executable(x);
  ARGS(PJRT_Executable_OutputElementTypes_Args, ot);
  ot.executable = e;
  OK(API->PJRT_Executable_OutputElementTypes(&ot));
  assert_int_equal(ot.num_output_types, 1);
  assert_int_equal(ot.output_types[0], PJRT_Buffer_Type_INVALID);
  executable_destroy(e);
  ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
  ad.executable = x;
  OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
  /* 2^k in f8E8M0FNU is the byte 127 + k */
  const float v[4] = {1, 2, 0.5f, 1024};
  const uint8_t want[4] = {127, 128, 126, 137};
  const int64_t d4[1] = {4};
  PJRT_Buffer *in =
      upload(f->c, ad.addressable_devices[0], PJRT_Buffer_Type_F32, v, d4, 1);
  PJRT_Buffer *out[1];
  execute_ok(x, 1, 1, &in, 1, out);
  check_buffer_shape(out[0], PJRT_Buffer_Type_INVALID, d4, 1);
  uint8_t got[4];
  download(out[0], got, sizeof got);
  assert_memory_equal(got, want, sizeof want);
  buffer_destroy(out[0]);
  buffer_destroy(in);
  loaded_destroy(x);
}

/* Launches whose lists outgrow the plugin's stack arrays: 129 arguments
 * on one device, 33 replicas (66 lists); a replicated program without
 * arguments, given no argument lists; ops counts without callbacks. */
static void test_wide_launches(void **state) {
  (void)state;
  enum { NA = 129, NR = 33 };
  PJRT_Client *c = new_client(NR);
  PJRT_Device *d[NR];
  get_devices(c, d, NR);
  /* 129 arguments */
  {
    char *src = wide_program(NA, 0);
    PJRT_LoadedExecutable *x = compile_ok(c, src, NULL, 0);
    free(src);
    ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
    ad.executable = x;
    OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
    PJRT_Device *dev = ad.addressable_devices[0];
    PJRT_Buffer *in[NA], *out[1];
    float vals[NA];
    for (int i = 0; i < NA; i++) {
      vals[i] = (float)i * 0.5f - 7.0f;
      in[i] = upload(c, dev, PJRT_Buffer_Type_F32, &vals[i], NULL, 0);
    }
    execute_ok(x, 1, NA, in, 1, out);
    float s = 0;
    download(out[0], &s, sizeof s);
    assert_true(s == vals[0] + vals[NA - 1]);
    buffer_destroy(out[0]);
    for (int i = 0; i < NA; i++) buffer_destroy(in[i]);
    loaded_destroy(x);
  }
  /* 33 replicas of an add */
  {
    int64_t ids[NR];
    for (int i = 0; i < NR; i++) ids[i] = device_id(d[i]);
    pb_buf o;
    pb_compile_options(&o, NR, 1, ids);
    PJRT_LoadedExecutable *x = compile_ok(c, k_add, o.b, o.n);
    const int64_t d4[1] = {4};
    PJRT_Buffer *in[NR * 2], *out[NR];
    float v[NR][4];
    for (int r = 0; r < NR; r++) {
      for (int i = 0; i < 4; i++) v[r][i] = (float)(r * 4 + i);
      in[2 * r] = upload(c, d[r], PJRT_Buffer_Type_F32, v[r], d4, 1);
      in[2 * r + 1] = in[2 * r];
    }
    PJRT_Buffer *const *al[NR];
    PJRT_Buffer **ol[NR];
    PJRT_Event *ev[NR];
    for (int r = 0; r < NR; r++) {
      al[r] = &in[2 * r];
      ol[r] = &out[r];
    }
    ARGS(PJRT_LoadedExecutable_Execute_Args, a);
    a.executable = x;
    a.argument_lists = al;
    a.num_devices = NR;
    a.num_args = 2;
    a.output_lists = ol;
    a.device_complete_events = ev;
    /* counts of send and recv ops without callbacks: nothing to refuse */
    PJRT_ExecuteOptions opt;
    exec_options(&opt, 0);
    opt.num_send_ops = 2;
    opt.num_recv_ops = 1;
    a.options = &opt;
    OK(API->PJRT_LoadedExecutable_Execute(&a));
    for (int r = 0; r < NR; r++) {
      await_ok(ev[r]);
      float got[4];
      download(out[r], got, sizeof got);
      for (int i = 0; i < 4; i++) assert_true(got[i] == 2 * v[r][i]);
      buffer_destroy(out[r]);
    }
    for (int r = 0; r < NR; r++) buffer_destroy(in[2 * r]);
    loaded_destroy(x);
  }
  /* 2 replicas without arguments: no argument lists at all (this read
   * argument_lists[0] through the NULL array, a crash, until
   * src/pjrt_plugin/execute.c:xp_args_resolve checked it) */
  {
    int64_t ids[2] = {device_id(d[5]), device_id(d[6])};
    pb_buf o;
    pb_compile_options(&o, 2, 1, ids);
    PJRT_LoadedExecutable *x = compile_ok(
        c,
        "func.func @main() -> tensor<i32> {\n"
        "  %0 = stablehlo.constant dense<41> : tensor<i32>\n"
        "  return %0 : tensor<i32>\n"
        "}\n",
        o.b, o.n);
    PJRT_Buffer *out[2] = {NULL, NULL};
    PJRT_Buffer **ol[2] = {&out[0], &out[1]};
    ARGS(PJRT_LoadedExecutable_Execute_Args, a);
    a.executable = x;
    a.num_devices = 2;
    a.output_lists = ol;
    OK(API->PJRT_LoadedExecutable_Execute(&a));
    /* argument lists given, each NULL (no arguments to hold) */
    PJRT_Buffer *out2[2] = {NULL, NULL};
    PJRT_Buffer **ol2[2] = {&out2[0], &out2[1]};
    PJRT_Buffer *const *al[2] = {NULL, NULL};
    a.argument_lists = al;
    a.output_lists = ol2;
    OK(API->PJRT_LoadedExecutable_Execute(&a));
    for (int r = 0; r < 2; r++) {
      int32_t got = 0;
      download(out[r], &got, sizeof got);
      assert_int_equal(got, 41);
      download(out2[r], &got, sizeof got);
      assert_int_equal(got, 41);
      assert_ptr_equal(buffer_device(out[r]), d[5 + r]);
      buffer_destroy(out[r]);
      buffer_destroy(out2[r]);
    }
    loaded_destroy(x);
  }
  {
    PJRT_LoadedExecutable *x = compile_ok(c, k_add, NULL, 0);
    ARGS(PJRT_LoadedExecutable_AddressableDevices_Args, ad);
    ad.executable = x;
    OK(API->PJRT_LoadedExecutable_AddressableDevices(&ad));
    const float v[4] = {1, 2, 3, 4};
    const int64_t d4[1] = {4};
    PJRT_Buffer *in = upload(c, ad.addressable_devices[0],
                             PJRT_Buffer_Type_F32, v, d4, 1);
    PJRT_Buffer *args[2] = {in, in}, *out[1];
    PJRT_ExecuteOptions opt;
    exec_options(&opt, 0);
    opt.num_send_ops = 1;
    opt.num_recv_ops = 1;
    OK(execute_opts(x, 1, 2, args, 1, out, NULL, NULL, &opt));
    float got[4];
    download(out[0], got, sizeof got);
    for (int i = 0; i < 4; i++) assert_true(got[i] == 2 * v[i]);
    buffer_destroy(out[0]);
    buffer_destroy(in);
    loaded_destroy(x);
  }
  /* 300 buffers at once, then none: more records than the plugin keeps
   * for reuse (256) go back to the system; the next ones are fine */
  {
    enum { NB = 300 };
    static PJRT_Buffer *many[NB];
    for (int i = 0; i < NB; i++) {
      int32_t v = i * 7 - 1000;
      many[i] = upload(c, d[i % NR], PJRT_Buffer_Type_S32, &v, NULL, 0);
    }
    for (int i = 0; i < NB; i++) {
      int32_t got = 0;
      if (i % 50 == 0) {
        download(many[i], &got, sizeof got);
        assert_int_equal(got, i * 7 - 1000);
      }
      buffer_destroy(many[i]);
    }
    int32_t v = 5, got = 0;
    PJRT_Buffer *b = upload(c, d[0], PJRT_Buffer_Type_S32, &v, NULL, 0);
    download(b, &got, sizeof got);
    assert_int_equal(got, 5);
    buffer_destroy(b);
  }
  /* an ExecuteContext_Destroy of nothing */
  ARGS(PJRT_ExecuteContext_Destroy_Args, cd);
  OK(API->PJRT_ExecuteContext_Destroy(&cd));
  client_destroy(c);
}

/* PJRT_Program checks: formats of four letters that are not "mlir", NULL
 * format or code with a size, an empty format; partition counts that
 * disagree with the device assignment. */
static void test_program_checks(void **state) {
  host_fixture *f = *state;
  const int IA = PJRT_Error_Code_INVALID_ARGUMENT;
  PJRT_LoadedExecutable *x = NULL;
  EXPECT_ERR(compile(f->c, k_add, "mliz", NULL, 0, &x),
             PJRT_Error_Code_UNIMPLEMENTED,
             "program format \"mliz\" is not implemented by xrt");
  EXPECT_ERR(compile(f->c, k_add, "", NULL, 0, &x),
             PJRT_Error_Code_UNIMPLEMENTED, "program format \"\"");
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)k_add;
  prog.code_size = strlen(k_add);
  prog.format = NULL;
  prog.format_size = 4;
  ARGS(PJRT_Client_Compile_Args, a);
  a.client = f->c;
  a.program = &prog;
  EXPECT_ERR(API->PJRT_Client_Compile(&a), IA,
             "args->program->format is NULL");
  prog.format = "mlir";
  prog.code = NULL;
  EXPECT_ERR(API->PJRT_Client_Compile(&a), IA, "args->program->code is NULL");
  assert_null(a.executable);
  /* build options of 1 x 2 against an assignment of 1 x 1 */
  {
    int64_t one[1] = {device_id(f->d[1])};
    pb_buf dap, ebo, o;
    pb_device_assignment(&dap, 1, 1, one, 1);
    pb_init(&ebo);
    pb_int(&ebo, 5, 2);
    pb_msg(&ebo, 9, &dap);
    pb_init(&o);
    pb_msg(&o, 3, &ebo);
    EXPECT_ERR(compile(f->c, k_add, "mlir", o.b, o.n, &x), IA,
               "compile_options ask for 0 replica(s) x 2");
    assert_null(x);
  }
}

/* Programs without results: a check op that fails is INTERNAL (PJRT has
 * no code of xrt's CHECK_FAILED); output lists may then be NULL. */
static void test_no_results(void **state) {
  host_fixture *f = *state;
  static const char *fmt =
      "func.func @main() {\n"
      "  %%a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n"
      "  %%b = stablehlo.constant dense<[1, %d]> : tensor<2xi64>\n"
      "  check.expect_eq %%a, %%b : tensor<2xi64>\n"
      "  func.return\n"
      "}\n";
  char src[512];
  for (int bad = 0; bad < 2; bad++) {
    snprintf(src, sizeof src, fmt, bad ? 3 : 2);
    PJRT_LoadedExecutable *x = compile_ok(f->c, src, NULL, 0);
    PJRT_Buffer **ol[1] = {NULL};
    PJRT_Event *ev[1] = {NULL};
    ARGS(PJRT_LoadedExecutable_Execute_Args, a);
    a.executable = x;
    a.num_devices = 1;
    a.output_lists = ol;
    a.device_complete_events = ev;
    PJRT_Error *e = API->PJRT_LoadedExecutable_Execute(&a);
    if (bad) {
      EXPECT_ERR(e, PJRT_Error_Code_INTERNAL,
                 "PJRT_LoadedExecutable_Execute: ");
      assert_null(ev[0]);
    } else {
      OK(e);
      await_ok(ev[0]);
    }
    loaded_destroy(x);
  }
  /* replicated on 2 devices, no output lists to fill */
  snprintf(src, sizeof src, fmt, 2);
  int64_t ids[2] = {device_id(f->d[2]), device_id(f->d[3])};
  pb_buf o;
  pb_compile_options(&o, 2, 1, ids);
  PJRT_LoadedExecutable *x = compile_ok(f->c, src, o.b, o.n);
  PJRT_Buffer **ol[2] = {NULL, NULL};
  PJRT_Event *ev[2] = {NULL, NULL};
  ARGS(PJRT_LoadedExecutable_Execute_Args, a);
  a.executable = x;
  a.num_devices = 2;
  a.output_lists = ol;
  a.device_complete_events = ev;
  OK(API->PJRT_LoadedExecutable_Execute(&a));
  await_ok(ev[0]);
  await_ok(ev[1]);
  loaded_destroy(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_api_table),
      cmocka_unit_test(test_initialize_and_attributes),
      cmocka_unit_test(test_client_devices_memories),
      cmocka_unit_test(test_buffers),
      cmocka_unit_test(test_event_on_ready),
      cmocka_unit_test(test_compile_execute_add),
      cmocka_unit_test(test_replicated_all_reduce),
      cmocka_unit_test(test_copy_and_delete),
      cmocka_unit_test(test_plugin_errors),
      cmocka_unit_test_setup_teardown(test_bad_struct_size, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test_setup_teardown(test_null_args, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test_setup_teardown(test_null_fields, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test_setup_teardown(test_bad_host_buffers, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test_setup_teardown(test_bad_create_options, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test_setup_teardown(test_destroy_null, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test(test_bad_execute_args),
      cmocka_unit_test(test_released_objects),
      cmocka_unit_test(test_two_threads),
      cmocka_unit_test(test_participants),
      cmocka_unit_test(test_multi_launch_errors),
      cmocka_unit_test_setup_teardown(test_buffer_types_and_layouts,
                                      fixture_setup, fixture_teardown),
      cmocka_unit_test(test_create_options_faults),
      cmocka_unit_test_setup_teardown(test_compile_options_proto,
                                      fixture_setup, fixture_teardown),
      cmocka_unit_test(test_entry_sweep),
      cmocka_unit_test_setup_teardown(test_dispatch_fallbacks, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test(test_error_objects),
      cmocka_unit_test(test_wide_launches),
      cmocka_unit_test_setup_teardown(test_no_results, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test_setup_teardown(test_program_checks, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test_setup_teardown(test_unnamed_output_type, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test_setup_teardown(test_no_arguments, fixture_setup,
                                      fixture_teardown),
      cmocka_unit_test(test_participant_faults),
      cmocka_unit_test(test_after_client_destroy),
      cmocka_unit_test(test_execute_general_edges),
      cmocka_unit_test_setup_teardown(test_assignment_and_context,
                                      fixture_setup, fixture_teardown),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
