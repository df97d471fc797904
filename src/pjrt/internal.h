/*
 * src/pjrt/internal.h - what the files of the PJRT adapter (xrt_pjrt.c:
 * PJRT plugins as xrt plugins) share.  It uses xrt's public API only.
 *
 * The adapter turns one PJRT_Api table (a vendor's PJRT plugin) into one
 * xrt_plugin_api table.  Every table it makes is the first member of an
 * xpj_plugin, so the core's calls that carry the table (client_create,
 * platform_describe) lead back to the PJRT table; every other call
 * carries one of our objects (client, memory, executable), which point to
 * their plugin.
 *
 * Memory: xrt deals in untyped device memory, PJRT in typed, shaped
 * buffers.  An xrt "mem" is an xpj_mem: its byte size and either a
 * PJRT_Buffer (with its type and dims) or host staging bytes.  Writes
 * stage (or upload with the type of the buffer the mem already holds);
 * execute uploads staged arguments with the entry's input types; outputs
 * are PJRT buffers; reads download.
 *
 * The files (src/pjrt/sources.txt):
 *   error.c    PJRT_Error -> xrt_status and message; named values
 *   wrap.c     xrt_pjrt_plugin_wrap / unwrap, version and size checks,
 *              the platform description
 *   client.c   clients and devices
 *   buffer.c   memories, transfers, events
 *   proto.c    the minimal protobuf writer for CompileOptionsProto
 *   compile.c  compile and executables
 *   execute.c  execute: one PJRT call per launch
 */
#ifndef XPJ_INTERNAL_H
#define XPJ_INTERNAL_H

#include "xrt.h"
#include "pjrt_abi.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Functions the adapter's files share: hidden in the libraries, static in
 * the generated single file (which defines XPJ_AMALGAMATION). */
#if defined(XPJ_AMALGAMATION)
#define XPJ_PRIVATE static
#elif defined(__GNUC__) && !defined(_WIN32)
#define XPJ_PRIVATE __attribute__((visibility("hidden")))
#else
#define XPJ_PRIVATE
#endif

#if defined(__GNUC__)
#define XPJ_PRINTF(fmt, first) XRT_PRINTF_FORMAT(fmt, first)
#else
#define XPJ_PRINTF(fmt, first)
#endif

/* Thread-locals (one spare memory record per thread, buffer.c): the
 * initial-exec model under glibc, as the core's (a shared library's
 * default model calls __tls_get_addr on every access). */
#if defined(_MSC_VER)
#define XPJ_TLS __declspec(thread)
#elif defined(__GLIBC__) && defined(__GNUC__)
#define XPJ_TLS _Thread_local __attribute__((tls_model("initial-exec")))
#else
#define XPJ_TLS _Thread_local
#endif

/* Counts a PJRT plugin may report before we call them garbage. */
#define XPJ_MAX_DEVICES 65536
#define XPJ_MAX_ATTRIBUTES 65536
/* Arguments and outputs of a one-device launch kept on the stack. */
#define XPJ_STACK_IO 16

/* Attributes copied out of PJRT_NamedValues (one allocation for the
 * strings). */
typedef struct xpj_attrs {
  int n;
  xrt_attribute *a;
  char *pool;
} xpj_attrs;

/* One wrapped PJRT plugin. */
typedef struct xpj_plugin {
  xrt_plugin_api table; /* first: the core hands &table back */
  /* The plugin's table as far as its struct_size reaches; what lies
   * beyond (an older plugin) reads NULL. */
  PJRT_Api fn;
  char *name;  /* registration name, for messages */
  char *label; /* " (path)" or "" */
  char version[48];
  char shlo_min[48], shlo_max[48];
  int has_shlo_min, has_shlo_max;
  xpj_attrs attrs;
} xpj_plugin;

/* One device of a client. */
typedef struct xpj_device {
  PJRT_Device *dev;
  int id;     /* PJRT_DeviceDescription_Id (the index when unknown) */
  char *kind; /* "pjrt" when the plugin does not say */
  xpj_attrs attrs;
} xpj_device;

typedef struct xpj_mem xpj_mem;

typedef struct xpj_client {
  const xpj_plugin *p;
  xrt_allocator al;
  PJRT_Client *pc;
  int n;
  xpj_device *devs;
  /* Recycled memory records: a dispatch allocates one per output.  A
   * spin lock (held for a few instructions; a mutex costs ~50 more per
   * lock and unlock, twice per dispatch) guards the lists; each thread
   * also keeps one spare record aside (buffer.c), of the client whose
   * serial (never reused) it names.  Every record the client made is on
   * all_mems, which client destroy frees. */
  atomic_flag free_lock;
  xpj_mem *free_mems;
  xpj_mem *all_mems;
  uint64_t serial;
} xpj_client;

/* An xrt device memory. */
struct xpj_mem {
  size_t bytes;
  PJRT_Buffer *buf;        /* NULL: none (see host) */
  PJRT_Buffer_Type type;   /* of buf */
  int32_t rank;            /* of buf */
  int64_t dims[XRT_MAX_RANK];
  unsigned char *host;     /* staged bytes (bytes of them), or NULL */
  xpj_mem *next_free;
  xpj_mem *next_all;       /* the client's all_mems */
};

/* A launch of several participants being gathered (execute.c). */
typedef struct xpj_launch xpj_launch;

/* An executable: the PJRT loaded executable and what the entry takes. */
typedef struct xpj_exe {
  xpj_client *c;
  PJRT_LoadedExecutable *le;
  int num_inputs, num_outputs;
  xrt_shape *in, *out;          /* [num_inputs], [num_outputs] */
  PJRT_Buffer_Type *in_type, *out_type;
  int num_parts;                /* replicas * partitions */
  int portable;                 /* one participant, run on any device */
  /* By logical id (replica * num_partitions + partition): its device and
   * its argument list's place in a PJRT launch. */
  int *device_of_lid, *slot_of_lid;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  xpj_launch *launches;         /* being gathered */
} xpj_exe;

/* ---- allocation (error.c) ---- */
XPJ_PRIVATE void *xpj_alloc(xrt_allocator al, size_t n);   /* zeroed */
XPJ_PRIVATE void xpj_free(xrt_allocator al, void *ptr);

/* ---- error.c ---- */

/* Writes a message into err (if any) and returns code. */
XPJ_PRIVATE xrt_status xpj_fail(xrt_plugin_error *err, xrt_status code,
                                const char *fmt, ...) XPJ_PRINTF(3, 4);
/* Turns a PJRT_Error of fn into a status and "plugin 'NAME': fn: message"
 * in err, and destroys it.  NULL error: XRT_OK. */
XPJ_PRIVATE xrt_status xpj_error(const xpj_plugin *p, PJRT_Error *e,
                                 const char *fn, xrt_plugin_error *err);
/* The same, with the test for no error inline (the dispatch path). */
#define XPJ_ERROR(p, e, fn, err) ((e) ? xpj_error(p, e, fn, err) : XRT_OK)
/* Whether e (non-NULL) is UNIMPLEMENTED; destroys it then. */
XPJ_PRIVATE int xpj_unimplemented(const xpj_plugin *p, PJRT_Error *e);
/* Copies n named values (from fn) into *out; garbage is an error. */
XPJ_PRIVATE xrt_status xpj_attrs_copy(const xpj_plugin *p, const char *fn,
                                      const PJRT_NamedValue *v, size_t n,
                                      xpj_attrs *out, xrt_plugin_error *err);
XPJ_PRIVATE void xpj_attrs_free(xpj_attrs *a);

/* ---- client.c, buffer.c, compile.c, execute.c: their table entries ---- */
XPJ_PRIVATE void xpj_client_fill(xrt_plugin_api *t);
XPJ_PRIVATE void xpj_buffer_fill(xrt_plugin_api *t);
XPJ_PRIVATE void xpj_compile_fill(xrt_plugin_api *t);
XPJ_PRIVATE void xpj_execute_fill(xrt_plugin_api *t);

/* ---- buffer.c ---- */

/* The PJRT type of an xrt element type (INVALID when PJRT has none). */
XPJ_PRIVATE PJRT_Buffer_Type xpj_type_of(xrt_dtype t);
/* Makes mem hold a PJRT buffer of type t and shape s on device dev,
 * uploading what it holds (staged or a buffer of another type). */
XPJ_PRIVATE xrt_status xpj_mem_ensure(xpj_client *c, int dev, xpj_mem *m,
                                      PJRT_Buffer_Type t, const xrt_shape *s,
                                      xrt_plugin_error *err);
/* Whether mem holds a PJRT buffer of type t and shape s already (inline:
 * every argument of every dispatch asks). */
static inline int xpj_mem_ready(const xpj_mem *m, PJRT_Buffer_Type t,
                                const xrt_shape *s) {
  if (!m->buf || m->type != t || m->rank != s->rank) return 0;
  for (int32_t i = 0; i < s->rank; i++)
    if (m->dims[i] != s->dims[i]) return 0;
  return 1;
}
XPJ_PRIVATE void xpj_buffer_destroy(const xpj_plugin *p, PJRT_Buffer *b);
/* Gives mem the output buffer b (type t, shape s), replacing what it
 * held.  Inline, as are the two below: the dispatch path calls each. */
static inline void xpj_mem_adopt(xpj_client *c, xpj_mem *m, PJRT_Buffer *b,
                                 PJRT_Buffer_Type t, const xrt_shape *s) {
  /* An output's memory is new (no buffer, no staging): the tests are
   * inline, and so is the copy of the few dims (memcpy is a call). */
  if (m->buf) xpj_buffer_destroy(c->p, m->buf);
  if (m->host) {
    xpj_free(c->al, m->host);
    m->host = NULL;
  }
  m->buf = b;
  m->type = t;
  m->rank = s->rank;
  for (int32_t i = 0; i < s->rank; i++) m->dims[i] = s->dims[i];
}

/* Awaits and destroys ev (NULL: nothing) of fn.  Await, then Destroy:
 * two calls, the fewest that give the outcome (PJRT_Event_IsReady does
 * not, so IsReady + Error would be two as well before the Destroy). */
static inline xrt_status xpj_await(const xpj_plugin *p, PJRT_Event *ev,
                                   const char *fn, xrt_plugin_error *err) {
  if (!ev) return XRT_OK;
  PJRT_Event_Await_Args a;
  a.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE;
  a.extension_start = NULL;
  a.event = ev;
  PJRT_Error *e = p->fn.PJRT_Event_Await(&a);
  xrt_status s = XPJ_ERROR(p, e, fn, err);
  PJRT_Event_Destroy_Args d;
  d.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE;
  d.extension_start = NULL;
  d.event = ev;
  if ((e = p->fn.PJRT_Event_Destroy(&d))) {
    xrt_plugin_error ignored;
    xpj_error(p, e, "PJRT_Event_Destroy", &ignored);
  }
  return s;
}

/* ---- proto.c: CompileOptionsProto ---- */

/* Serializes the compile options of a launch shape: replicas,
 * partitions, and the PJRT device id of every logical id (replica-major),
 * or portable (one participant, any device).  *out is allocated with al. */
XPJ_PRIVATE xrt_status xpj_compile_options(xrt_allocator al, int replicas,
                                           int partitions, const int *ids,
                                           int portable, uint8_t **out,
                                           size_t *out_size,
                                           xrt_plugin_error *err);


#endif /* XPJ_INTERNAL_H */
