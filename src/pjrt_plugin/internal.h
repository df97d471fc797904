/*
 * src/pjrt_plugin/internal.h - what the files of libxrt_pjrt.so share:
 * xrt as a PJRT plugin.  MIT licensed; see LICENSE.
 *
 * The library exports one symbol, GetPjrtApi, whose PJRT_Api table (PJRT C
 * API 0.60, declared by ../pjrt/pjrt_abi.h) is backed by xrt's public API
 * (xrt.h) and the built-in simulator ("sim").  It carries its own copy of
 * xrt (every symbol hidden), so a process with an xrt of its own can load
 * it without clashes.
 *
 * Objects.  Every pointer the plugin hands out (clients, devices, device
 * descriptions, memories, buffers, executables, loaded executables,
 * events, execute contexts) is a handle, not an address: a slot index and
 * a generation in one word (handle.c).  A call looks the handle up in a
 * process-wide table of slots, lock-free (one acquire load and a compare),
 * and a released, foreign or garbage pointer finds no live slot of the
 * expected kind: the call returns an INVALID_ARGUMENT PJRT_Error and never
 * reads freed memory.  Releasing retires the slot with a compare-and-swap,
 * so of two threads destroying one object only one frees it.
 * Objects refer to each other by handle too where the other may die
 * first: a buffer names its device and memory, an executable its client,
 * so a buffer that outlives its client is reported, not dereferenced.
 *
 * Errors are handles too (PJRT_Error_Destroy retires them): the code and
 * the message, copied from xrt_last_error() right after the failing xrt
 * call (error.c).
 *
 * Work is synchronous underneath: transfers and executions have finished
 * (or failed, and the call returned the error) when the PJRT call returns,
 * so the events they hand out are ready at once.  Events that wrap an xrt
 * event (a buffer's ready event, one participant of a larger launch run
 * alone through execute_device) follow it.
 *
 * The files (src/pjrt_plugin/sources.txt; the single file
 * xrt_pjrt_plugin.c is ../pjrt/pjrt_abi.h, this header and these):
 *   handle.c      the handle table, and the allocator every file uses
 *   error.c       PJRT_Error, status mapping, argument checks' messages
 *   event.c       PJRT_Event
 *   client.c      clients and their named-value create options
 *   device.c      devices, device descriptions, memories
 *   buffer.c      buffers and transfers
 *   proto.c       a minimal protobuf reader for CompileOptionsProto
 *   compile.c     PJRT_Client_Compile
 *   executable.c  executables and loaded executables (all but Execute)
 *   execute.c     PJRT_LoadedExecutable_Execute
 *   api.c         the table, GetPjrtApi, the plugin's attributes, and the
 *                 functions xrt does not implement
 */
#ifndef XP_INTERNAL_H
#define XP_INTERNAL_H

#include "xrt.h"
#include "../pjrt/pjrt_abi.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Functions the files share: static in the generated single file, which
 * defines XP_AMALGAMATION, hidden in the shared library otherwise. */
#ifdef XP_AMALGAMATION
#define XP_PRIVATE static
#elif defined(__GNUC__) && !defined(_WIN32)
#define XP_PRIVATE __attribute__((visibility("hidden")))
#else
#define XP_PRIVATE
#endif

/* Thread-locals (a spare buffer record per thread, buffer.c): the
 * initial-exec model under glibc, as the core's (a shared library's
 * default model calls __tls_get_addr on every access). */
#if defined(_MSC_VER)
#define XP_TLS __declspec(thread)
#elif defined(__GLIBC__) && defined(__GNUC__)
#define XP_TLS _Thread_local __attribute__((tls_model("initial-exec")))
#else
#define XP_TLS _Thread_local
#endif

/* printf-style checks of the message helpers. */
#if defined(__GNUC__)
#define XP_PRINTF(fmt, first) XRT_PRINTF_FORMAT(fmt, first)
#else
#define XP_PRINTF(fmt, first)
#endif

/* The platform name PJRT_Client_PlatformName reports: the runtime and
 * the device it drives ("xrt" on its "sim" devices). */
#define XP_PLATFORM_NAME "xrt-sim"
/* The one memory kind a device has. */
#define XP_MEMORY_KIND "device"

/* ----------------------------------------------------------------------
 * The core's entry points for this plugin (src/core/exec.c)
 *
 * A PJRT buffer holds one reference to the core's buffer object behind it
 * and, only once a call needs one, an xrt handle of it (with a reference
 * of its own).  The dispatch path (execute.c) runs on objects:
 * xrt__pjrt_execute pins the arguments with one atomic operation each
 * (the executable's reference is the plugin's, kept until no call can use
 * it: see xp_exe_core.xe), runs the execution inline as xrt_execute
 * would, and
 * makes the outputs as objects without handles, so that a dispatch whose
 * outputs are destroyed, or passed to the next dispatch, touches no xrt
 * handle.  When it cannot run that way (*ran false: work queued on the
 * device, arguments pending, failed or invalid, a launch of several
 * devices) it has done nothing and the caller goes through xrt_execute.
 * Hidden symbols of the core (never static, also in the single files);
 * the objects are opaque here.
 * -------------------------------------------------------------------- */
#if defined(__GNUC__) && !defined(_WIN32)
#define XP_CORE_API __attribute__((visibility("hidden")))
#else
#define XP_CORE_API
#endif
/* The objects of live handles, or NULL (no reference taken: devices and
 * executables live as long as the plugin's handles of them). */
XP_CORE_API void *xrt__pjrt_device_obj(const xrt_device *device);
XP_CORE_API void *xrt__pjrt_executable_obj(const xrt_executable *exe);
/* A new reference to the object of a live buffer handle, or NULL. */
XP_CORE_API void *xrt__pjrt_buffer_hold(const xrt_buffer *buffer);
/* Drops one reference (the last frees the device memory). */
XP_CORE_API void xrt__pjrt_buffer_unref(void *obj);
/* A new handle of an object made without one, with a reference of its
 * own; NULL (xrt_last_error says) when out of handles.  Once per object. */
XP_CORE_API xrt_buffer *xrt__pjrt_buffer_publish(void *obj);
/* Runs exe on device with the argument objects; on success outputs[i]
 * are new objects (a reference each, for the caller) of output_bytes[i]
 * bytes (xrt_shape_bytes of the executable's output i).  *ran false:
 * left to xrt_execute, nothing done. */
XP_CORE_API xrt_status xrt__pjrt_execute(void *exe, void *device,
                                         void *const *args, int num_args,
                                         void **outputs, int num_outputs,
                                         const size_t *output_bytes,
                                         bool *ran);

/* ----------------------------------------------------------------------
 * Host memory (handle.c)
 * -------------------------------------------------------------------- */

/* Every allocation of the plugin goes through these (malloc's, calloc's
 * and free's contract; a size of 0 gives a block of its own), and so do
 * those of the xrt contexts and clients it creates (xp_allocator). */
XP_PRIVATE void *xp_malloc(size_t size);
XP_PRIVATE void *xp_calloc(size_t n, size_t size);
XP_PRIVATE void xp_free(void *p);
/* xp_malloc and xp_free as an xrt allocator. */
XP_PRIVATE xrt_allocator xp_allocator(void);

#ifdef XP_ALLOC_HOOKS
/* Test hooks, compiled in only where XP_ALLOC_HOOKS is defined (by
 * test/test_pjrt_plugin_alloc.c, which compiles these files in; never in
 * libxrt_pjrt.so or the single file).  xp_alloc_fail_after: from now on
 * allocation n + 1 fails (the first one for n = 0), and with persistent
 * every one after it too; n < 0: none fails from now on (the default).
 * xp_alloc_calls: the allocations asked for from the last n >= 0 to the
 * next n < 0; xp_alloc_failed: whether one of them failed; xp_alloc_live:
 * the blocks allocated and not yet freed.  Thread-safe; they count the
 * whole process's allocations (xrt's device threads included). */
XP_PRIVATE void xp_alloc_fail_after(long n, int persistent);
XP_PRIVATE long xp_alloc_calls(void);
XP_PRIVATE int xp_alloc_failed(void);
XP_PRIVATE long xp_alloc_live(void);
#endif

/* ----------------------------------------------------------------------
 * Handles (handle.c)
 * -------------------------------------------------------------------- */

/* What a handle refers to; a handle is only found under its own kind. */
typedef enum xp_kind {
  XP_KIND_FREE = 0,
  XP_KIND_CLIENT,
  XP_KIND_DEVICE,
  XP_KIND_DESCRIPTION,
  XP_KIND_MEMORY,
  XP_KIND_BUFFER,
  XP_KIND_EXECUTABLE,
  XP_KIND_LOADED,
  XP_KIND_EVENT,
  XP_KIND_EXEC_CONTEXT,
  XP_KIND_ERROR
} xp_kind;

/* Registers obj under kind; the new handle, or NULL when out of memory. */
XP_PRIVATE void *xp_handle_new(void *obj, xp_kind kind);
/* The object of a live handle of that kind, else NULL.  Lock-free; inline
 * (below), as every entry point looks up one or more handles. */
static inline void *xp_handle_get(const void *handle, xp_kind kind);
/* Retires a live handle and returns its object; NULL if it was not live
 * (already retired, by this thread or a concurrent one). */
XP_PRIVATE void *xp_handle_retire(const void *handle, xp_kind kind);
/* Handles no table slot has (see handle.c), for objects handed out
 * without allocating and never freed: the error saying that memory ran
 * out, and the event that is ready with success (event.c). */
typedef enum xp_reserved {
  XP_RESERVED_OOM_ERROR = 0,
  XP_RESERVED_EVENT_OK = 1
} xp_reserved;
static inline void *xp_handle_reserved(xp_reserved which);

/* The table's layout, here so that lookups inline (handle.c says why it
 * is safe to read any slot at any time).  A handle is
 * (generation << XP_IDX_BITS) | (slot index + 1), never 0; a slot's tag is
 * generation << XP_KIND_BITS | kind. */
#if UINTPTR_MAX > 0xffffffffu
#define XP_IDX_BITS 28u   /* up to 2^28 live objects */
#define XP_DIR_SIZE 65536u
#else
#define XP_IDX_BITS 20u   /* up to 2^20 live objects */
#define XP_DIR_SIZE 256u
#endif
#define XP_CHUNK 4096u    /* slots per chunk */
#define XP_IDX_MASK (((uintptr_t)1 << XP_IDX_BITS) - 1u)
#define XP_GEN_MASK ((uint64_t)(UINTPTR_MAX >> XP_IDX_BITS))
#define XP_KIND_BITS 8u
#define XP_NO_SLOT UINT32_MAX

typedef struct xp_slot {
  _Atomic uint64_t tag; /* generation << 8 | kind; kind 0: free */
  _Atomic(void *) obj;
  uint32_t next_free;   /* the free list, under handle.c's lock */
} xp_slot;

/* The chunks of slots, allocated on first need and never freed while the
 * library is loaded.  Shared data: static in the single file, hidden in
 * the library. */
#ifdef XP_AMALGAMATION
#define XP_EXTERN_DATA static
#define XP_PRIVATE_DATA static
#elif defined(__GNUC__) && !defined(_WIN32)
#define XP_EXTERN_DATA extern __attribute__((visibility("hidden")))
#define XP_PRIVATE_DATA __attribute__((visibility("hidden")))
#else
#define XP_EXTERN_DATA extern
#define XP_PRIVATE_DATA
#endif
XP_EXTERN_DATA _Atomic(xp_slot *) xp_dir[XP_DIR_SIZE];

/* Slot index 0 names no slot, so these handles are never a table's: they
 * name objects that are handed out without allocating (generation 1 +
 * which). */
static inline void *xp_handle_reserved(xp_reserved which) {
  return (void *)((uintptr_t)(1u + (unsigned)which) << XP_IDX_BITS);
}

static inline void *xp_handle_get(const void *handle, xp_kind kind) {
  uintptr_t h = (uintptr_t)handle, idx = (h & XP_IDX_MASK) - 1u;
  /* idx wraps to UINTPTR_MAX for slot index 0 (NULL, reserved handles). */
  if (idx >= (uintptr_t)XP_DIR_SIZE * XP_CHUNK) return NULL;
  xp_slot *chunk =
      atomic_load_explicit(&xp_dir[idx / XP_CHUNK], memory_order_acquire);
  if (!chunk) return NULL;
  xp_slot *s = &chunk[idx % XP_CHUNK];
  uint64_t want = (uint64_t)(h >> XP_IDX_BITS) << XP_KIND_BITS | (uint64_t)kind;
  if (atomic_load_explicit(&s->tag, memory_order_acquire) != want) return NULL;
  return atomic_load_explicit(&s->obj, memory_order_relaxed);
}

/* Slots kept across reuse.  An object recycled at a high rate (the
 * output buffers of dispatches, see buffer.c) keeps its slot while its
 * record waits for reuse: retiring it (xp_handle_retire_keep) and
 * publishing it again (xp_handle_renew) then touch the slot only, without
 * the table's lock and free list.  A slot kept is given back by
 * xp_handle_slot_free when its record is freed. */

/* The slot index of a handle xp_handle_new returned. */
static inline uint32_t xp_handle_slot(const void *handle) {
  return (uint32_t)(((uintptr_t)handle & XP_IDX_MASK) - 1u);
}

/* As xp_handle_retire, but the slot stays with the caller. */
static inline void *xp_handle_retire_keep(const void *handle, xp_kind kind) {
  uintptr_t h = (uintptr_t)handle, idx = (h & XP_IDX_MASK) - 1u;
  if (idx >= (uintptr_t)XP_DIR_SIZE * XP_CHUNK) return NULL;
  xp_slot *chunk =
      atomic_load_explicit(&xp_dir[idx / XP_CHUNK], memory_order_acquire);
  if (!chunk) return NULL;
  xp_slot *s = &chunk[idx % XP_CHUNK];
  uint64_t want = (uint64_t)(h >> XP_IDX_BITS) << XP_KIND_BITS | (uint64_t)kind;
  /* The kind bits go to XP_KIND_FREE, the generation stays until reuse;
   * of two threads retiring one handle, one wins. */
  uint64_t dead = want & ~(uint64_t)((1u << XP_KIND_BITS) - 1u);
  if (!atomic_compare_exchange_strong_explicit(&s->tag, &want, dead,
                                               memory_order_acq_rel,
                                               memory_order_relaxed))
    return NULL;
  return atomic_load_explicit(&s->obj, memory_order_relaxed);
}

/* Publishes obj under kind in slot idx, kept by the caller since its
 * xp_handle_retire_keep: the slot's next generation. */
static inline void *xp_handle_renew(uint32_t idx, void *obj, xp_kind kind) {
  xp_slot *s = &atomic_load_explicit(&xp_dir[idx / XP_CHUNK],
                                     memory_order_acquire)[idx % XP_CHUNK];
  uint64_t gen =
      ((atomic_load_explicit(&s->tag, memory_order_relaxed) >> XP_KIND_BITS) +
       1) & XP_GEN_MASK;
  if (gen == 0) gen = 1;
  atomic_store_explicit(&s->obj, obj, memory_order_relaxed);
  atomic_store_explicit(&s->tag, gen << XP_KIND_BITS | (uint64_t)kind,
                        memory_order_release);
  return (void *)((uintptr_t)(gen << XP_IDX_BITS) | (uintptr_t)(idx + 1u));
}

/* Gives a kept slot back to the table. */
XP_PRIVATE void xp_handle_slot_free(uint32_t idx);

/* ----------------------------------------------------------------------
 * Errors (error.c)
 * -------------------------------------------------------------------- */

/* A new error with a printf-style message (never NULL: out of memory
 * gives a static RESOURCE_EXHAUSTED error, under a reserved handle, that
 * PJRT_Error_Destroy leaves alone). */
XP_PRIVATE PJRT_Error *xp_error(PJRT_Error_Code code, const char *fmt, ...)
    XP_PRINTF(2, 3);
/* The error of a failed xrt call: its status mapped to a PJRT code and
 * xrt_last_error(), after "fn: ". */
XP_PRIVATE PJRT_Error *xp_error_xrt(const char *fn, xrt_status status);
/* The PJRT code of an xrt status. */
XP_PRIVATE PJRT_Error_Code xp_code_of(xrt_status status);
/* The code and message of an error (for events that keep them); an
 * error that is not live reads as INVALID_ARGUMENT with a message saying
 * so. */
XP_PRIVATE PJRT_Error_Code xp_error_code(const PJRT_Error *error);
XP_PRIVATE const char *xp_error_message(const PJRT_Error *error);
XP_PRIVATE void xp_error_free(PJRT_Error *error);
XP_PRIVATE void xp_error_register(PJRT_Api *api);

/* The argument checks every entry point starts with: args non-NULL and
 * struct_size at least min (the bytes up to the last member the call
 * reads or writes).  On failure the caller returns the error. */
XP_PRIVATE PJRT_Error *xp_check_args(const char *fn, const void *args,
                                     size_t min_size);
/* An INVALID_ARGUMENT error: "fn: what is NULL". */
XP_PRIVATE PJRT_Error *xp_error_null(const char *fn, const char *what);
/* An INVALID_ARGUMENT error: "fn: what is not a live PJRT_<kind>". */
XP_PRIVATE PJRT_Error *xp_error_stale(const char *fn, const char *what,
                                      const char *type);

/* Bytes of type t up to and including its member m. */
#define XP_END(t, m) (offsetof(t, m) + sizeof(((t *)0)->m))
/* Whether the caller's struct (struct_size) includes member m of type t. */
#define XP_HAS(args, t, m) ((args)->struct_size >= XP_END(t, m))
/* Starts an entry point: returns the argument error if there is one.
 * The check is inline (a NULL test and a compare); only a failure calls
 * out to build the error. */
#define XP_ARGS(fn, args, min)                                        \
  do {                                                                \
    if (!(args) || (args)->struct_size < (size_t)(min))               \
      return xp_check_args(fn, args, min);                            \
  } while (0)

/* ----------------------------------------------------------------------
 * Objects
 * -------------------------------------------------------------------- */

typedef struct xp_client xp_client;

/* One device of a client, with its description and its one memory (all
 * three handles refer to this record). */
typedef struct xp_device {
  xp_client *client;
  xrt_device *xd;
  void *xobj;               /* the core's object of xd */
  int index;                /* the xrt device id: PJRT id and hardware id */
  PJRT_Device *handle;
  PJRT_DeviceDescription *desc_handle;
  PJRT_Memory *memory_handle;
  PJRT_NamedValue *attributes; /* the device's xrt attributes */
  size_t num_attributes;
  char *debug_string, *to_string;       /* of the device */
  char *mem_debug_string, *mem_to_string; /* of its memory */
} xp_device;

struct xp_client {
  PJRT_Client *handle;
  xrt_context *context; /* the client's own: no XRT_PLUGINS (see client.c) */
  xrt_client *xc;
  int num_devices;
  xp_device *devices;         /* [num_devices] */
  PJRT_Device **device_list;  /* their handles, for the list calls */
  PJRT_Memory **memory_list;  /* their memories' handles */
  char *platform_version;
};

/* Element shape of a buffer or an output, in PJRT terms. */
typedef struct xp_shape {
  PJRT_Buffer_Type type;
  xrt_dtype dtype;
  size_t num_dims;
  size_t bytes; /* of the dense array */
  int64_t dims[XRT_MAX_RANK];
} xp_shape;

typedef struct xp_buffer {
  PJRT_Buffer *handle;
  struct xp_buffer *next_spare; /* in buffer.c's list of spare records */
  struct xp_buffer *all_prev, *all_next; /* buffer.c's list of all */
  uint32_t slot; /* the handle slot the record keeps (XP_NO_SLOT: none) */
  /* The core's buffer object (one reference, the record's), NULL once
   * deleted; and its xrt handle (a reference of its own), NULL until a
   * call needs one (xp_buffer_xrt), as outputs of the dispatch path have
   * none.  lock: making the handle against deleting. */
  _Atomic(void *) xobj;
  _Atomic(xrt_buffer *) xb;
  atomic_flag lock;
  PJRT_Device *device;        /* handles: the client may go first */
  PJRT_Memory *memory;
  xp_shape shape;
  /* The dense row-major layout GetMemoryLayout describes. */
  const int64_t *minor_to_major;
} xp_buffer;

/* What a compile produced, shared by the loaded executable and the
 * PJRT_Executables made from it (refcounted: the last one frees it). */
typedef struct xp_exe_core {
  _Atomic int refs;
  /* NULL once the loaded one is deleted; its reference is dropped only
   * when the last user of the core goes (xp_core_free, from a Destroy),
   * so that an Execute racing a Delete runs on a live object without a
   * reference of its own (xrt__pjrt_execute takes none). */
  _Atomic(xrt_executable *) xe;
  xrt_executable *xe_held;      /* the reference */
  void *xobj;                   /* the core's object of xe */
  PJRT_Client *client;
  char *name;
  int num_replicas, num_partitions, num_args;
  size_t num_outputs;
  xp_shape *outputs;                /* [num_outputs] */
  size_t *output_bytes;             /* [num_outputs], of outputs[i] */
  PJRT_Buffer_Type *output_types;   /* [num_outputs] */
  int64_t *output_dims;             /* concatenated */
  size_t *output_dim_sizes;         /* [num_outputs] */
  const char **output_kinds;        /* [num_outputs], each XP_MEMORY_KIND */
  size_t *output_kind_sizes;
  /* Devices by logical id (replica * num_partitions + partition). */
  size_t num_devices;
  PJRT_Device **devices;
  xrt_device **xdevices;
  char fingerprint[XRT_CACHE_KEY_CHARS + 1]; /* "" when none */
} xp_exe_core;

typedef struct xp_executable {
  PJRT_Executable *handle;
  xp_exe_core *core;
} xp_executable;

typedef struct xp_loaded {
  PJRT_LoadedExecutable *handle;
  xp_exe_core *core;
  _Atomic int deleted;
} xp_loaded;

XP_PRIVATE void xp_core_unref(xp_exe_core *core);
/* A new loaded executable over xe (which it takes over: released on
 * failure), with its fingerprint ("" for none) (executable.c). */
XP_PRIVATE PJRT_Error *xp_loaded_create(const char *fn, xp_client *c,
                                        xrt_executable *xe,
                                        const char *fingerprint,
                                        PJRT_LoadedExecutable **out);
/* The loaded executable of a handle, or NULL. */
static inline xp_loaded *xp_loaded_get(PJRT_LoadedExecutable *loaded) {
  return (xp_loaded *)xp_handle_get(loaded, XP_KIND_LOADED);
}

/* Fills device record d of client c for xrt device number index, with
 * its handles (device.c); xp_device_fini retires them and frees what it
 * holds (also of a record that init filled only in part). */
XP_PRIVATE PJRT_Error *xp_device_init(xp_client *c, xp_device *d, int index);
XP_PRIVATE void xp_device_fini(xp_device *d);

/* ---- lookups shared by the files ---- */

static inline xp_client *xp_client_get(PJRT_Client *client) {
  return (xp_client *)xp_handle_get(client, XP_KIND_CLIENT);
}
static inline xp_device *xp_device_get(PJRT_Device *device) {
  return (xp_device *)xp_handle_get(device, XP_KIND_DEVICE);
}
static inline xp_device *xp_memory_get(PJRT_Memory *memory) {
  return (xp_device *)xp_handle_get(memory, XP_KIND_MEMORY);
}
/* The record of device number index of an xrt device (NULL if it is not
 * one of the client's). */
XP_PRIVATE xp_device *xp_client_device_of(xp_client *c, const xrt_device *xd);

/* PJRT element types <-> xrt's; XRT_DTYPE_INVALID / PJRT INVALID when the
 * other side has no such type. */
XP_PRIVATE xrt_dtype xp_dtype_from_pjrt(PJRT_Buffer_Type t);
XP_PRIVATE PJRT_Buffer_Type xp_dtype_to_pjrt(xrt_dtype t);
/* Fills *out from an xrt shape. */
XP_PRIVATE void xp_shape_from_xrt(xp_shape *out, const xrt_shape *s);

/* A new PJRT_Buffer over xb (which it takes over) on device d, with the
 * shape already known; NULL when out of memory (xb is then released). */
XP_PRIVATE PJRT_Buffer *xp_buffer_wrap(xrt_buffer *xb, const xp_device *d,
                                       const xp_shape *shape);
/* The same over a core buffer object without a handle (taking over its
 * reference: dropped on failure). */
XP_PRIVATE PJRT_Buffer *xp_buffer_wrap_obj(void *xobj, const xp_device *d,
                                           const xp_shape *shape);
/* The xrt handle of a buffer, made on first need; NULL once deleted (or
 * out of handles). */
XP_PRIVATE xrt_buffer *xp_buffer_xrt(xp_buffer *b);

/* Retires and frees a buffer (releasing its xrt buffer); 0 if it was not
 * live. */
XP_PRIVATE int xp_buffer_free(PJRT_Buffer *buffer);

/* An event that is ready with error (the event takes it over); error
 * NULL gives the shared success event, which costs nothing.  NULL when
 * out of memory. */
XP_PRIVATE PJRT_Event *xp_event_ready(PJRT_Error *error);
/* Retires and frees an event; 0 if it was not live. */
XP_PRIVATE int xp_event_free(PJRT_Event *event);
/* A new event following an xrt event (which it takes over).  NULL when
 * out of memory (xe is then released). */
XP_PRIVATE PJRT_Event *xp_event_wrap(xrt_event *xe);

/* Reads the fields of a serialized CompileOptionsProto that xrt uses
 * (proto.c).  *out_assignment (from xp_malloc, NULL when none) lists
 * device ids by logical id. */
typedef struct xp_compile_options {
  int64_t num_replicas, num_partitions; /* 0: from the module */
  int *assignment;                      /* [replicas * partitions] or NULL */
  int64_t assignment_replicas, assignment_partitions;
  int portable;                         /* compile_portable_executable */
} xp_compile_options;
XP_PRIVATE PJRT_Error *xp_compile_options_parse(const char *fn,
                                                const uint8_t *data,
                                                size_t size,
                                                xp_compile_options *out);

/* Each file fills its entries of the table. */
XP_PRIVATE void xp_event_register(PJRT_Api *api);
XP_PRIVATE void xp_client_register(PJRT_Api *api);
XP_PRIVATE void xp_device_register(PJRT_Api *api);
XP_PRIVATE void xp_buffer_register(PJRT_Api *api);
XP_PRIVATE void xp_compile_register(PJRT_Api *api);
XP_PRIVATE void xp_executable_register(PJRT_Api *api);
XP_PRIVATE void xp_execute_register(PJRT_Api *api);

/* A copy of s (n bytes, NUL added); NULL when out of memory. */
XP_PRIVATE char *xp_strndup(const char *s, size_t n);
/* A printf result from xp_malloc; NULL when out of memory. */
XP_PRIVATE char *xp_format(const char *fmt, ...) XP_PRINTF(1, 2);

#endif /* XP_INTERNAL_H */
