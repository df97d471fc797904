/*
 * src/core/internal.h - what the files of the core share: includes, the
 * operating-system layer's interface (os.h, shared with the disk cache),
 * types, macros, and the functions and data one file defines for others
 * (XRT__PRIVATE, XRT__EXTERN_DATA), in the order of the files that define
 * them.  Part of the core of xrt: everything that does not depend on a
 * device.  MIT licensed; see LICENSE.
 *
 * The files, in the order data flows (src/core/sources.txt; the generated
 * single file xrt.c is os.h, this header and then these):
 *   os.c            the operating-system layer
 *   error.c log.c trace.c   status and errors, logging, Chrome traces
 *   types.c         memory (allocator, arenas), dtypes, shapes, opcodes
 *   parse.c parse_ops.c parse_pretty.c parse_module.c
 *                   StableHLO text to IR (tokens, types, attributes; ops
 *                   and regions; the pretty syntax; functions and module)
 *   parse_sdy.c sharding_annot.c   sharding annotations (Shardy ops,
 *                   mhlo.sharding): identities, shard_map regions made
 *                   per-device code, split shardings refused at compile
 *   print.c         IR to canonical StableHLO text (xrt_program_print)
 *   normalize.c     one attribute form for pretty and generic syntax
 *   verify.c verify_index.c verify_ctrl.c verify_linalg.c verify_types.c
 *                   op constraints on the parsed IR, per op family
 *   plugin.c handle.c client.c queue.c
 *                   plugins (ABI checks, loading, registry), handles,
 *                   clients and devices, device queues and events
 *   buffer.c hostfn.c program.c compile_cache.c exec.c
 *                   buffers, host functions, compilation, the compile
 *                   cache, execution
 *   multiprocess.c sharding.c pmap.c   several processes, sharded arrays,
 *                   pmap
 *   variable.c variable_reshard.c variable_mp.c variable_io.c   variables
 *   npy.c dlpack.c  NumPy files, DLPack
 */


/* First: it sets the POSIX level before any system header, and defines
 * XRT__PRIVATE and its kin (the generated xrt.c begins with it). */
#include "os.h"

#include "xrt.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(_MSC_VER)
#define XRT__THREAD_LOCAL __declspec(thread)
#else
#define XRT__THREAD_LOCAL _Thread_local
#endif

/* The thread-locals of the core are small (a launch id block, a spare
 * buffer object, a statistics block, the last error's code and pointer:
 * under 200 bytes) and use the initial-exec model under glibc: in a shared
 * library (libxrt.so, libxrt_pjrt.so, a plugin that embeds xrt.c) the
 * default model calls __tls_get_addr on every access, three times per
 * dispatch.  glibc keeps a reserve of static TLS for libraries loaded
 * later with dlopen, which this fits in. */
#if defined(__GLIBC__) && defined(__GNUC__) && !defined(_WIN32)
#define XRT__THREAD_LOCAL_SMALL \
  XRT__THREAD_LOCAL __attribute__((tls_model("initial-exec")))
#else
#define XRT__THREAD_LOCAL_SMALL XRT__THREAD_LOCAL
#endif

#define XRT__UNUSED(x) ((void)(x))
#define XRT__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))


/* ---- error.c ---- */

/* ======================================================================
 * 2. Errors
 * ==================================================================== */

/* The last failure of this thread.  The message lives on the heap (made
 * at the thread's first failure, freed when the thread exits), so that
 * the thread-locals of the core stay small enough for the initial-exec
 * model below; `fallback` holds it when that allocation fails. */
#define XRT__ERROR_MAX 2048
typedef struct xrt__error_state {
  xrt_status code;
  char *message;    /* XRT__ERROR_MAX bytes, or NULL */
  char fallback[96];
} xrt__error_state;
XRT__EXTERN_DATA XRT__THREAD_LOCAL_SMALL xrt__error_state xrt__error;
/* Where this thread's message goes (never NULL), and its capacity. */
XRT__PRIVATE char *xrt__error_buf(size_t *cap);
/* Records code and a formatted message (fmt NULL: no message). */
XRT__PRIVATE xrt_status xrt__error_vset(xrt_status code, const char *fmt,
                                        va_list ap);

/* ---- log.c ---- */
XRT__PRIVATE void xrt__log_failure(xrt_status code, const char *message);

/* ---- error.c ---- */
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
XRT__PRIVATE xrt_status xrt__fail(xrt_status code, const char *fmt, ...);
XRT__PRIVATE const char *xrt__plugin_msg(xrt_plugin_error *err);
XRT__PRIVATE xrt_status xrt__fail_plugin(xrt_status code, const char *plugin,
                                   const xrt_plugin_error *err);

#define XRT__CHECK_ARG(cond, what)                                          \
  do {                                                                      \
    if (!(cond)) return xrt__fail(XRT_INVALID_ARGUMENT, "%s: %s", __func__, \
                                  what);                                    \
  } while (0)

/* ======================================================================
 * 2b. Logging and tracing
 *
 * Logging.  Every component has a level: the fixed components of xrt plus
 * a few more named in a spec (plugins' own names); a component not named
 * uses the default.  xrt__log_max holds the highest level of any
 * component, so that a disabled message costs one relaxed atomic load;
 * it starts above every level, which sends the first caller through the
 * lazy read of XRT_LOG (pthread_once).  Messages are formatted on the
 * stack and go to the callback or, as one fputs per line, to stderr.
 *
 * Tracing.  A Chrome trace-event file: {"traceEvents":[ ... ]} with "M"
 * events naming each client's process ("xrt client N (sim)") and tracks
 * (tid 0 "host", tid i+1 "device i") and "X" complete events (ts and dur
 * in microseconds from the trace's start).  Events are appended to a
 * memory buffer under one mutex and written in chunks; a failed write
 * stops the trace (with a log line), never the caller.  Clients are kept
 * in a small registry (their trace pid, name, device count and the host
 * services table handed to their plugin), so a trace started after a
 * client was created still names its tracks.
 * ==================================================================== */

struct xrt__client;

/* ---- log.c ---- */
XRT__PRIVATE void xrt__log_emitv(xrt_log_level level, const char *component,
                           const char *fmt, va_list ap);

/* Logs a printf-style message under component at level. */
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(3, 4)
#endif
static inline void xrt__log(xrt_log_level level, const char *component,
                            const char *fmt, ...) {
  if (!xrt_log_enabled(level, component)) return;
  va_list ap;
  va_start(ap, fmt);
  xrt__log_emitv(level, component, fmt, ap);
  va_end(ap);
}

/* ---- trace.c ---- */

/* ---- tracing ---- */

/* Monotonic clock of the trace, in nanoseconds. */
static inline int64_t xrt__now_ns(void) { return xrt__os_now_ns(); }
XRT__EXTERN_DATA _Atomic int xrt__trace_active;

/* Whether a trace is recording (cheap: check before taking times). */
static inline bool xrt__trace_on(void) {
  return atomic_load_explicit(&xrt__trace_active, memory_order_relaxed) != 0;
}

/* The start time of a traced span: 0 when no trace is recording (the
 * clock never reads 0, so 0 means "do not record"). */
static inline int64_t xrt__trace_begin(void) {
  if (!xrt__trace_on()) return 0;
  int64_t t = xrt__now_ns();
  return t ? t : 1;
}

/* A client as traces know it. */
typedef struct xrt__trace_client {
  struct xrt__trace_client *next;
  const struct xrt__client *c;
  int pid;           /* "xrt client <pid>" */
  int num_devices;   /* 0 until the client is open */
  bool named;        /* its "M" events are in the current trace */
  char plugin[64];
  xrt_plugin_host_api host; /* handed to the plugin (ctx: the client) */
  xrt_allocator al;         /* the client's, which this entry came from */
} xrt__trace_client;

#define XRT__TRACE_BUF (64 * 1024)
XRT__EXTERN_DATA pthread_mutex_t xrt__trace_mu;
typedef struct xrt__trace_state {
  FILE *f;            /* NULL: no trace */
  char path[512];
  int64_t t0;         /* the trace's start, ns */
  bool first;         /* no event written yet */
  bool failed;        /* a write failed: the trace stopped */
  size_t len;
  char buf[XRT__TRACE_BUF];
  xrt__trace_client *clients;
  int next_pid;
} xrt__trace_state;
XRT__EXTERN_DATA xrt__trace_state xrt__tr;
XRT__PRIVATE void xrt__trace_put(const char *s, size_t n);
XRT__PRIVATE void xrt__trace_puts(const char *s);
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(1, 2)
#endif
XRT__PRIVATE void xrt__trace_printf(const char *fmt, ...);
XRT__PRIVATE void xrt__trace_put_escaped(const char *str);
XRT__PRIVATE void xrt__trace_name_client(xrt__trace_client *tc);
XRT__PRIVATE xrt__trace_client *xrt__trace_find(const struct xrt__client *c);
XRT__PRIVATE char *xrt__trace_itoa(char *q, uint64_t v);
XRT__PRIVATE char *xrt__trace_us(char *q, int64_t ns);
XRT__PRIVATE char *xrt__trace_cat(char *q, const char *s);

/* Records one complete event on client c's track of device (-1: the
 * client's host track).  cat: "transfer", "execute", "collective",
 * "reshard", "compile", "cache"; name is copied. */
static inline void xrt__trace_complete(const struct xrt__client *c, int device,
                                       const char *cat, const char *name,
                                       int64_t t0_ns, int64_t t1_ns) {
  if (!xrt__trace_on()) return;
  pthread_mutex_lock(&xrt__trace_mu);
  if (xrt__tr.f && !xrt__tr.failed) {
    xrt__trace_client *tc = xrt__trace_find(c);
    if (tc) xrt__trace_name_client(tc);
    if (device < -1 || (tc && device >= tc->num_devices)) device = -1;
    /* Spans that began before the trace did are cut at its start. */
    if (t0_ns < xrt__tr.t0) t0_ns = xrt__tr.t0;
    if (t1_ns < t0_ns) t1_ns = t0_ns;
    xrt__trace_puts(xrt__tr.first ? "\n" : ",\n");
    xrt__tr.first = false;
    xrt__trace_puts("{\"ph\":\"X\",\"cat\":\"");
    xrt__trace_put_escaped(cat ? cat : "");
    xrt__trace_puts("\",\"name\":\"");
    xrt__trace_put_escaped(name ? name : "");
    char tail[160], *q = tail;
    q = xrt__trace_cat(q, "\",\"pid\":");
    q = xrt__trace_itoa(q, (uint64_t)(tc ? tc->pid : 0));
    q = xrt__trace_cat(q, ",\"tid\":");
    q = xrt__trace_itoa(q, (uint64_t)(device + 1));
    q = xrt__trace_cat(q, ",\"ts\":");
    q = xrt__trace_us(q, t0_ns - xrt__tr.t0);
    q = xrt__trace_cat(q, ",\"dur\":");
    q = xrt__trace_us(q, t1_ns - t0_ns);
    *q++ = '}';
    xrt__trace_put(tail, (size_t)(q - tail));
  }
  pthread_mutex_unlock(&xrt__trace_mu);
}
XRT__PRIVATE void xrt__trace_named(const struct xrt__client *c, int device,
                             const char *cat, const char *prefix,
                             const char *name, int64_t t0_ns);
XRT__PRIVATE void xrt__trace_transfer(const struct xrt__client *c, int device,
                                const char *dir, const xrt_shape *shape,
                                int64_t t0_ns);
XRT__PRIVATE xrt__trace_client *xrt__trace_client_of(struct xrt__client *c,
                                               const xrt_allocator *a);

/* The services table handed to a plugin's client_create (args.host);
 * valid until xrt__trace_client_closed(c).  NULL when out of memory. */
static inline const xrt_plugin_host_api *xrt__host_api_for(
    struct xrt__client *c, const xrt_allocator *a) {
  pthread_mutex_lock(&xrt__trace_mu);
  xrt__trace_client *tc = xrt__trace_client_of(c, a);
  pthread_mutex_unlock(&xrt__trace_mu);
  return tc ? &tc->host : NULL;
}
XRT__PRIVATE void xrt__trace_client_opened(struct xrt__client *c,
                                     const char *plugin, int num_devices);
XRT__PRIVATE void xrt__trace_client_closed(const struct xrt__client *c);
XRT__PRIVATE int64_t xrt__compile_begin(void);
XRT__PRIVATE void xrt__compiled(const struct xrt__client *c, const char *module,
                          const char *entry, int64_t t0_ns);
XRT__PRIVATE void xrt__trace_cache_hit(const struct xrt__client *c,
                                 const char *cache, const char *what,
                                 int64_t t0_ns);

/* ---- types.c ---- */
static inline void *xrt__alloc(const xrt_allocator *a, size_t n) {
  return a->alloc(a->self, n);
}
XRT__PRIVATE void *xrt__calloc(const xrt_allocator *a, size_t count, size_t size);
static inline void xrt__free(const xrt_allocator *a, void *p) {
  if (p) a->free(a->self, p);
}
XRT__PRIVATE void *xrt__realloc(const xrt_allocator *a, void *p, size_t old,
                          size_t n);
XRT__PRIVATE char *xrt__strdup_with(const xrt_allocator *a, const char *s);
XRT__EXTERN_DATA XRT__THREAD_LOCAL_SMALL unsigned xrt__nomem_seen;
XRT__PRIVATE xrt_status xrt__nomem(const char *what);

/* An arena: many small allocations freed at once (parsed programs). */
typedef struct xrt__arena_chunk {
  struct xrt__arena_chunk *next;
  size_t used, cap;
  max_align_t align_[]; /* data follows */
} xrt__arena_chunk;

typedef struct xrt__arena {
  xrt_allocator allocator;
  xrt__arena_chunk *head;
  size_t total;
} xrt__arena;
XRT__PRIVATE void xrt__arena_init(xrt__arena *a, xrt_allocator allocator);
XRT__PRIVATE void xrt__arena_release(xrt__arena *a);
XRT__PRIVATE void *xrt__arena_alloc(xrt__arena *a, size_t n);
XRT__PRIVATE char *xrt__arena_strndup(xrt__arena *a, const char *s, size_t n);

enum { XRT__K_NONE, XRT__K_PRED, XRT__K_SINT, XRT__K_UINT, XRT__K_FLOAT,
       XRT__K_COMPLEX };
XRT__PRIVATE int xrt__dtype_class(xrt_dtype t);
XRT__PRIVATE xrt_status xrt__shape_check(const xrt_shape *s, size_t *bytes);
static inline bool xrt__shape_equal(const xrt_shape *a, const xrt_shape *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}
XRT__PRIVATE xrt_opcode xrt__opcode_from_name(const char *s, size_t n);
/* The ops past XRT_OP_COUNT that xrt reads but does not run (see
 * XRT__OP_EXTRA_FIRST): code by name (XRT_OP_INVALID if none), name by
 * code (NULL if none). */
XRT__PRIVATE xrt_opcode xrt__extra_opcode(const char *s, size_t n);
XRT__PRIVATE const char *xrt__extra_op_name(int code);
/* The spelling of an element type in a value's type (xrt_dtype_name, and
 * "index" for XRT__DT_INDEX). */
XRT__PRIVATE const char *xrt__dtype_spelling(xrt_dtype t);

/* ---- parse.c ---- */

/* ======================================================================
 * 5. Parse
 * ==================================================================== */

/* ----------------------------------------------------------------------
 * The parser: StableHLO MLIR text to an xrt_ir_module.
 *
 * Approach: a hand-written recursive-descent parser that works directly on
 * the characters (there is no token stream). Every failure is reported at
 * the offending character through xrt__perr, which records the message
 * with xrt__fail and longjmps back to xrt__parse_module; that keeps the
 * grammar code free of error plumbing. Anything that must survive the jump
 * lives in the parser struct: growable scratch stacks (malloc'd, freed
 * once at the end) used strictly LIFO, so a nested region or attribute can
 * push on the same stack as the op that encloses it and pop back to its
 * mark. Finished arrays are copied into the arena. Names of values live in
 * a chained hash table whose entries form a stack, so leaving a region
 * just pops the names it defined (the newest entry of a chain is always
 * its head). Nesting of regions, types and brackets is bounded by
 * XRT__PARSE_MAX_DEPTH. Line/column numbers are computed lazily from
 * pointers with a forward-only cache, so the hot path never counts
 * newlines twice.
 *
 * As in MLIR, an op's location is its name, and the types an op's syntax
 * states for its operands are checked against the values' own types when
 * they are read, so a mismatch is reported at the use (%name); each
 * operand's position rides along on a stack parallel to its value id.
 * Value types are interned (a program has few distinct types) and expanded
 * into xrt_ir_func.value_types once per function. Both the pretty and the
 * generic (--mlir-print-op-generic) forms of ops, functions and modules
 * are accepted.
 * -------------------------------------------------------------------- */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define XRT__PARSE_PRINTF(a, b) XRT_PRINTF_FORMAT(a, b)
#else
#define XRT__PARSE_PRINTF(a, b)
#endif

/* ---------------------------------------------------------------------
 * Scratch stacks and the parser state
 * ------------------------------------------------------------------- */

typedef struct xrt__pvec {
  char *data;
  size_t n, cap, elem;
} xrt__pvec;

typedef struct xrt__tok {
  const char *s;
  size_t n;
} xrt__tok;

typedef struct xrt__sym {
  const char *s;
  uint32_t n, hash;
  int32_t id, count, next;
} xrt__sym;

typedef struct xrt__symtab {
  xrt__pvec syms; /* xrt__sym, newest last */
  int32_t *buckets;
  uint32_t mask;
} xrt__symtab;

typedef struct xrt__name { /* a result or block-argument name */
  const char *s;
  uint32_t n;
  int32_t count;
} xrt__name;

/* ---- sharding annotations (parse_sdy.c, sharding_annot.c) ----
 * The Shardy ops the parser reads get codes past XRT_OP_COUNT; the sharding
 * pass at the end of parsing (xrt__shard_pass) rewrites them all away, so
 * neither the verifier nor plugins see them. */
#define XRT__OP_SDY_CONSTRAINT (XRT_OP_COUNT + 1)
#define XRT__OP_SDY_RESHARD (XRT_OP_COUNT + 2)
#define XRT__OP_SDY_MANUAL (XRT_OP_COUNT + 3)
#define XRT__OP_SDY_RETURN (XRT_OP_COUNT + 4)

/* ---- valid StableHLO that xrt reads and prints but does not run ----
 * The parser keeps these in the IR (xrt_program_print shows them, and a
 * portable artifact reads into the same IR as its text); a module that
 * holds any is parsed without verification, and compiling it is
 * UNIMPLEMENTED naming the first, at its location (xrt__find_unsupported,
 * program.c), so no plugin ever receives one.
 *   - ops of the StableHLO dialect xrt has no opcode for (deprecated ones
 *     and the async ones), codes XRT__OP_EXTRA_FIRST.. (types.c);
 *   - `index` elements of a value's type: dtype XRT__DT_INDEX (inside
 *     attributes `index` stays i64, as layouts use it);
 *   - memref<NxT> (VHLO's buffers) and !stablehlo.future<T, ...>: kinds
 *     XRT__TYPE_MEMREF (shape as a tensor's) and XRT__TYPE_FUTURE (elems
 *     as a tuple's).
 * A bounded tensor (tensor<?xT, #stablehlo.bounds<N>>) is run like any
 * shape-polymorphic one; its bounds ride in the type's elems, unused by
 * tensors otherwise: one xrt_ir_type of kind XRT__TYPE_BOUNDS whose
 * shape.dims are the bounds (XRT_DIM_DYNAMIC for `?`), num_elems 0. */
#define XRT__OP_EXTRA_FIRST (XRT_OP_COUNT + 8)
#define XRT__OP_ASYNC_DONE (XRT__OP_EXTRA_FIRST + 0)
#define XRT__OP_ASYNC_START (XRT__OP_EXTRA_FIRST + 1)
#define XRT__OP_CROSS_REPLICA_SUM (XRT__OP_EXTRA_FIRST + 2)
#define XRT__OP_EINSUM (XRT__OP_EXTRA_FIRST + 3)
#define XRT__OP_SET_DIMENSION_SIZE (XRT__OP_EXTRA_FIRST + 4)
#define XRT__OP_TORCH_INDEX_SELECT (XRT__OP_EXTRA_FIRST + 5)
#define XRT__OP_UNARY_EINSUM (XRT__OP_EXTRA_FIRST + 6)
#define XRT__OP_EXTRA_END (XRT__OP_EXTRA_FIRST + 7)
#define XRT__DT_INDEX ((xrt_dtype)(XRT_DTYPE_COUNT + 1))
#define XRT__TYPE_MEMREF 3
#define XRT__TYPE_FUTURE 4
#define XRT__TYPE_BOUNDS 5

/* An mhlo.sharding or sdy.sharding of a function argument or result. */
typedef struct xrt__shard_note {
  struct xrt__shard_note *next;
  int32_t func, index;   /* function (module order); argument or result */
  bool result, sdy;      /* sdy: Shardy text (inside #sdy.sharding<...>) */
  const char *text;
  xrt_ir_loc loc;        /* the argument, or the result's type */
} xrt__shard_note;

/* An sdy.mesh: named axes and their sizes. */
typedef struct xrt__mesh {
  struct xrt__mesh *next;
  const char *name;
  int32_t naxes;
  const char **axes;
  int64_t *sizes;
} xrt__mesh;

typedef struct xrt__annots {
  xrt__shard_note *notes;
  xrt__mesh *meshes;
} xrt__annots;

/* What the sharding pass leaves for each compile to check against its
 * launch shape (xrt__shard_check). */
typedef struct xrt__shard_info {
  const char *split_what;     /* the first value a sharding splits other */
  const char *split_sharding; /* than at a shard_map boundary; NULL: none */
  xrt_ir_loc split_loc;
  int64_t devices;            /* devices of the shard_map regions; 0: none */
  xrt_ir_loc devices_loc;
} xrt__shard_info;

typedef struct xrt__parser {
  xrt__arena *arena;
  const char *beg, *p, *end;
  const char *file;
  int line_offset;
  const char *lc_pos, *lc_line_start; /* line/col cache */
  int lc_line;
  int depth;
  bool in_attr;      /* `index` is a type only inside attributes */
  xrt__tok dt_last;  /* the last element type name looked up, */
  xrt_dtype dt_last_type; /* and its dtype */
  jmp_buf jb;
  xrt_status status; /* code of the failure that longjmp'd */
  xrt__symtab vals;  /* value names of the current function */
  xrt__symtab funcs; /* function names */
  xrt__pvec vtypes;  /* int32_t per value id of the current function: its
                        type's index in utypes */
  xrt__pvec utypes;  /* xrt_ir_type: the distinct value types seen, */
  int32_t *utab;     /* hashed into these utypes indices (-1: empty) */
  uint32_t umask;
  xrt__pvec ints;    /* int32_t: operands, block args */
  xrt__pvec uses;    /* const char *, one per ints entry: where it was
                        written (%name), NULL if synthesized */
  xrt__pvec i64s;    /* int64_t scratch */
  xrt__pvec f64s;    /* double scratch */
  xrt__pvec tys;     /* xrt_ir_type scratch: result types, tuple elements */
  xrt__pvec attrs;   /* xrt_ir_attr */
  xrt__pvec ops;     /* xrt_ir_op */
  xrt__pvec regions; /* xrt_ir_region */
  xrt__pvec names;   /* xrt__name */
  xrt__pvec fns;     /* xrt_ir_func */
  xrt__annots annots;           /* sharding annotations set aside */
  const xrt__shard_info *shard; /* what xrt__shard_pass found; NULL: none */
  /* Text a portable artifact was read into: its large constants, which
   * the text names dense<"@K"> (xrt__lit_hex); NULL for other text. */
  const struct xrt__bctext *bc;
} xrt__parser;
XRT__PRIVATE _Noreturn void xrt__perr(xrt__parser *p, const char *at, xrt_status code,
                                const char *fmt, ...) XRT__PARSE_PRINTF(4, 5);
XRT__PRIVATE void xrt__loc_of(xrt__parser *p, const char *at, int *line, int *col);
XRT__PRIVATE _Noreturn void xrt__perr_loc(xrt__parser *p, xrt_ir_loc loc,
                                    xrt_status code, const char *fmt, ...)
    XRT__PARSE_PRINTF(4, 5);
XRT__PRIVATE _Noreturn void xrt__oom(xrt__parser *p);
static inline void *xrt__p_alloc(xrt__parser *p, size_t n) {
  void *m = xrt__arena_alloc(p->arena, n ? n : 1);
  if (!m) xrt__oom(p);
  return m;
}
XRT__PRIVATE const char *xrt__strdup(xrt__parser *p, const char *s, size_t n);
XRT__PRIVATE void *xrt__push_raw(xrt__parser *p, xrt__pvec *v);
static inline void *xrt__push(xrt__parser *p, xrt__pvec *v) {
  return memset(xrt__push_raw(p, v), 0, v->elem);
}

#define XRT__VAT(v, T, i) (((T *)(v).data)[i])
XRT__PRIVATE void *xrt__vcopy(xrt__parser *p, const xrt__pvec *v, size_t mark);
XRT__PRIVATE xrt__sym *xrt__sym_find(xrt__symtab *t, const char *s, size_t n);
XRT__PRIVATE void xrt__sym_add(xrt__parser *p, xrt__symtab *t, const char *s,
                         size_t n, int32_t id, int32_t count);
XRT__PRIVATE void xrt__sym_pop(xrt__symtab *t, size_t mark);
XRT__PRIVATE bool xrt__is_idstart(int c);
XRT__PRIVATE bool xrt__is_namechar(int c);
XRT__PRIVATE void xrt__ws_slow(xrt__parser *p);

/* Skips whitespace and comments; most calls find a token right away. */
static inline void xrt__ws(xrt__parser *p) {
  if (p->p < p->end && (unsigned char)*p->p > ' ' && *p->p != '/') return;
  xrt__ws_slow(p);
}
static inline int xrt__peek(xrt__parser *p) {
  xrt__ws(p);
  return p->p < p->end ? (unsigned char)*p->p : -1;
}
static inline int xrt__peek2(xrt__parser *p) { /* character after the next one */
  xrt__ws(p);
  return p->p + 1 < p->end ? (unsigned char)p->p[1] : -1;
}
static inline bool xrt__eat(xrt__parser *p, char c) {
  if (xrt__peek(p) != (unsigned char)c) return false;
  p->p++;
  return true;
}
XRT__PRIVATE _Noreturn void xrt__expected(xrt__parser *p, const char *what);
XRT__PRIVATE void xrt__expect(xrt__parser *p, char c);
XRT__PRIVATE bool xrt__eat_arrow(xrt__parser *p);
XRT__PRIVATE xrt__tok xrt__ident(xrt__parser *p);
static inline bool xrt__tok_is(xrt__tok t, const char *s) {
  size_t n = strlen(s);
  return t.n == n && !memcmp(t.s, s, n);
}
XRT__PRIVATE bool xrt__eat_kw(xrt__parser *p, const char *kw);
XRT__PRIVATE void xrt__expect_kw(xrt__parser *p, const char *kw);
XRT__PRIVATE bool xrt__peek_kw(xrt__parser *p, const char *kw);
XRT__PRIVATE xrt__tok xrt__suffix_name(xrt__parser *p);
XRT__PRIVATE xrt__tok xrt__string_raw(xrt__parser *p);
XRT__PRIVATE void xrt__depth_in(xrt__parser *p);
XRT__PRIVATE void xrt__skip_balanced(xrt__parser *p, bool stop_at_comma);
XRT__PRIVATE void xrt__skip_loc(xrt__parser *p);

/* ---------------------------------------------------------------------
 * Numbers
 * ------------------------------------------------------------------- */

typedef struct xrt__num {
  const char *at;
  bool neg, hex, is_float; /* is_float: has '.', exponent, inf or nan */
  uint64_t mag;            /* integers */
  double d;                /* floats (and integers, approximately) */
} xrt__num;
XRT__PRIVATE xrt__num xrt__scan_num(xrt__parser *p);
XRT__PRIVATE int64_t xrt__num_to_i64(xrt__parser *p, const xrt__num *r);
XRT__PRIVATE int64_t xrt__parse_i64(xrt__parser *p);
XRT__PRIVATE void xrt__parse_type(xrt__parser *p, xrt_ir_type *t);
XRT__PRIVATE void xrt__parse_dense(xrt__parser *p, xrt_ir_literal *lit);
XRT__PRIVATE void xrt__parse_dense_as(xrt__parser *p, xrt_ir_literal *lit,
                                      xrt_ir_type *written);
XRT__PRIVATE void xrt__parse_attr(xrt__parser *p, xrt_ir_attr *a, bool suffix);
XRT__PRIVATE int32_t xrt__parse_dict_entries(xrt__parser *p, char close);
/* The range of integer type dt (quant storage defaults). */
XRT__PRIVATE void xrt__int_range(xrt_dtype dt, int64_t *lo, int64_t *hi);
/* (float)d, without undefined behaviour beyond FLT_MAX. */
XRT__PRIVATE float xrt__f64_to_f32(double d);

/* ---- parse_ops.c ---- */
/* The type of value id (valid until the next xrt__new_value). */
static inline const xrt_ir_type *xrt__value_type(xrt__parser *p, int32_t id) {
  return &XRT__VAT(p->utypes, xrt_ir_type, XRT__VAT(p->vtypes, int32_t, id));
}
XRT__PRIVATE int32_t xrt__new_value(xrt__parser *p, const xrt_ir_type *t);
XRT__PRIVATE int32_t xrt__parse_use(xrt__parser *p);
XRT__PRIVATE void xrt__push_operand_at(xrt__parser *p, int32_t id, const char *at);
XRT__PRIVATE const char *xrt__use_end(const xrt__parser *p, const char *at);
XRT__PRIVATE void xrt__p_operand(xrt__parser *p);
XRT__PRIVATE bool xrt__p_type_eq(const xrt_ir_type *a, const xrt_ir_type *b);
XRT__PRIVATE void xrt__p_type_fmt(const xrt_ir_type *t, char *buf, size_t cap, size_t *n);

/* An op under construction; its pieces sit on the scratch stacks above
 * these marks until xrt__finish_op copies them. */
typedef struct xrt__opb {
  xrt_ir_op op;
  const char *at;        /* the op name: its loc, and errors about the op */
  size_t names_mark;     /* result names on p->names */
  int32_t num_names;     /* results the op declares (0: none written) */
  size_t operands_mark;  /* p->ints */
  size_t attrs_mark;     /* p->attrs */
  size_t regions_mark;   /* p->regions */
  size_t rtypes_mark;    /* p->tys: result types */
  int positional;        /* bare keywords seen (compare LT ... FLOAT) */
  int check;             /* check.* lowering kind, 0 if none */
  xrt_ir_attr dot[4];    /* dot_general pretty dims */
} xrt__opb;
XRT__PRIVATE void xrt__check_use(xrt__parser *p, const xrt__opb *b, int32_t k,
                           const xrt_ir_type *t);
XRT__PRIVATE void xrt__add_attr(xrt__parser *p, const char *name, const xrt_ir_attr *a);
XRT__PRIVATE xrt_ir_attr *xrt__find_attr(xrt__parser *p, xrt__opb *b, const char *name);
/* parse_sdy.c */
XRT__PRIVATE xrt_opcode xrt__sdy_opcode(const char *s, size_t n);
XRT__PRIVATE bool xrt__is_sdy_op(int code);
XRT__PRIVATE const char *xrt__sdy_name(int code);
XRT__PRIVATE void xrt__sdy_pretty(xrt__parser *p, xrt__opb *b);
XRT__PRIVATE void xrt__sdy_note_attrs(xrt__parser *p, size_t mark, bool result,
                                      int32_t index, const char *at);
XRT__PRIVATE bool xrt__sdy_module_item(xrt__parser *p, xrt__tok t, bool generic);
/* sharding_annot.c: the pass at the end of parsing, and its check per
 * compile (see the file's comment). */
XRT__PRIVATE void xrt__shard_pass(xrt__parser *p, xrt_ir_module *m);
XRT__PRIVATE xrt_status xrt__shard_check(const xrt__shard_info *info,
                                         int32_t replicas, int32_t partitions);
XRT__PRIVATE void xrt__push_op(xrt__parser *p, const xrt_ir_op *op);
XRT__PRIVATE void xrt__finish_op(xrt__parser *p, xrt__opb *b);

/* A region being built: a scope for names, its ops and block args. */
typedef struct xrt__rgn {
  size_t sym_mark, ops_mark, args_mark;
} xrt__rgn;
XRT__PRIVATE void xrt__rgn_begin(xrt__parser *p, xrt__rgn *r);
XRT__PRIVATE int32_t xrt__rgn_arg(xrt__parser *p, xrt__name nm, const xrt_ir_type *t);
XRT__PRIVATE xrt_ir_region xrt__rgn_end(xrt__parser *p, xrt__rgn *r);
XRT__PRIVATE void xrt__push_region(xrt__parser *p, const xrt_ir_region *g);

/* ---- parse_pretty.c ---- */
XRT__PRIVATE void xrt__parse_op(xrt__parser *p);

/* ---- parse_ops.c ---- */
XRT__PRIVATE void xrt__parse_arg(xrt__parser *p, xrt__name *nm, xrt_ir_type *t);
XRT__PRIVATE void xrt__parse_block(xrt__parser *p, xrt__rgn *r, bool label_ok);
XRT__PRIVATE void xrt__parse_region(xrt__parser *p);
XRT__PRIVATE int32_t xrt__parse_types(xrt__parser *p, bool parens);
XRT__PRIVATE void xrt__parse_fn_type(xrt__parser *p, xrt__opb *b);
XRT__PRIVATE void xrt__parse_pretty_sig(xrt__parser *p, xrt__opb *b);
XRT__PRIVATE void xrt__opt_attr_dict(xrt__parser *p);
XRT__PRIVATE int xrt__p_check_kind(xrt__tok t, bool *is_const);
XRT__PRIVATE void xrt__check_const_operand(xrt__parser *p, xrt__opb *b,
                                     const xrt_ir_literal *lit);
XRT__PRIVATE void xrt__check_finish(xrt__parser *p, xrt__opb *b);

/* ---- parse_module.c ---- */

/* The StableHLO version the parser implements (xrt_stablehlo_version). */
#define XRT__STABLEHLO_VERSION "1.8.0"

/* ---- plugin.c ---- */
XRT__PRIVATE bool xrt__version_parse(const char *s, int v[3]);

/* ---- parse_module.c ---- */
XRT__PRIVATE xrt_status xrt__parse_module(xrt__arena *arena, const char *text,
                                    size_t len, const char *file,
                                    int line_offset, xrt_ir_module **out,
                                    const xrt__shard_info **shard);
/* The same for the text a portable artifact was read into (its large
 * constants by reference, see xrt__bctext). */
XRT__PRIVATE xrt_status xrt__parse_module_bc(xrt__arena *arena,
                                       const struct xrt__bctext *bc,
                                       xrt_ir_module **out,
                                       const xrt__shard_info **shard);

/* ---- bytecode.c ---- */
/* A portable artifact (MLIR bytecode of VHLO) read as StableHLO text, and
 * where its lines came from (struct xrt__bcline, bytecode.h). */
typedef struct xrt__bctext {
  const char *text;               /* in the arena given to the reader */
  size_t len;
  const struct xrt__bcline *lines;
  size_t num_lines;
  const char *file;
  /* Large constants, which the text names dense<"@K"> instead of
   * spelling their bytes in hex (that would cost more than the rest of
   * reading): blob K's bytes are in the artifact, valid while it is. */
  const struct xrt__bcblob *blobs;
  size_t num_blobs;
} xrt__bctext;
typedef struct xrt__bcblob {
  const void *data;
  size_t len;
} xrt__bcblob;
/* Whether data starts with MLIR bytecode's magic, "ML\xefR". */
XRT__PRIVATE bool xrt__is_bytecode(const char *data, size_t len);
/* Reads the artifact into *out (text and line table from arena); errors
 * are "FILE: bytecode offset N: ..." (INVALID_ARGUMENT; UNIMPLEMENTED for
 * an artifact newer than xrt reads). */
XRT__PRIVATE xrt_status xrt__bytecode_read(xrt__arena *arena, const char *data,
                                           size_t len, const char *file,
                                           xrt__bctext *out);
/* The artifact's text in memory from malloc (*text; the caller frees it),
 * for tests (not in the single file). */
#if !defined(XRT__AMALGAMATION)
XRT__PRIVATE xrt_status xrt__bytecode_to_text(const char *data, size_t len,
                                              const char *file, char **text,
                                              size_t *text_len);
#endif
/* Whether attribute a of op (a StableHLO op) holds the value StableHLO
 * leaves out, as the artifact reader drops it (bytecode_vhlo.c's rules):
 * a program's text and artifact then give one IR.  A list default (window
 * strides of ones, ...) counts only at the length it stands for, so that
 * leaving it out never hides a malformed one from a later verification. */
XRT__PRIVATE bool xrt__vhlo_ir_default(const xrt_ir_op *op, const xrt_ir_attr *a);
/* After parsing t->text (status parsed, module m when it succeeded): gives
 * ops and functions the artifact's locations, or relocates the parse
 * error's message to the artifact. */
XRT__PRIVATE xrt_status xrt__bytecode_locate(const xrt__bctext *t,
                                             xrt_status parsed,
                                             xrt_ir_module *m);

/* ---- print.c ---- */
/* The module as StableHLO text in print.c's canonical form; *out_text from
 * malloc (the caller frees it), *out_len (may be NULL) its length. */
XRT__PRIVATE xrt_status xrt__print_module(const xrt_ir_module *m,
                                          char **out_text, size_t *out_len);

/* ---- normalize.c ---- */
XRT__PRIVATE xrt_status xrt__normalize_module(xrt__arena *arena, xrt_ir_module *m);
/* The attribute forms alone, without CHLO lowering (which needs static
 * shapes: refine.c lowers a shape-polymorphic program once refined). */
XRT__PRIVATE xrt_status xrt__normalize_attrs(xrt__arena *arena, xrt_ir_module *m);
/* The fields of convolution's dimension_numbers: [input, kernel, output]
 * x [batch or input feature, feature or output feature, spatial]. */
XRT__EXTERN_DATA const char *const xrt__conv_dim_names[3][3];

/* ---- chlo.c ---- */
/* Rewrites the CHLO ops that have a StableHLO spelling into it (called by
 * xrt__normalize_module). */
XRT__PRIVATE xrt_status xrt__chlo_lower_module(xrt__arena *arena,
                                               xrt_ir_module *m);

/* ---- verify.c ---- */

/* ======================================================================
 * 6. Verify
 *
 * The parser gives every value a type from the program's own annotations;
 * the verifier checks that each op's operands, results and attributes obey
 * the StableHLO specification's constraints, so a device plugin receives a
 * program it can trust.  Ops without checks here are left to the plugin.
 * ==================================================================== */

typedef struct xrt__vctx {
  const xrt_ir_module *module;
  const xrt_ir_func *func;
  const xrt_ir_op *op;
} xrt__vctx;
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
XRT__PRIVATE xrt_status xrt__vfail(const xrt__vctx *v, const char *fmt, ...);
XRT__PRIVATE const xrt_ir_type *xrt__vtype(const xrt__vctx *v, int32_t id);
XRT__PRIVATE const xrt_shape *xrt__vshape(const xrt__vctx *v, int32_t id);
XRT__PRIVATE const xrt_shape *xrt__operand(const xrt__vctx *v, int i);
XRT__PRIVATE const xrt_shape *xrt__result(const xrt__vctx *v, int i);
XRT__PRIVATE bool xrt__type_equal(const xrt_ir_type *a, const xrt_ir_type *b);
XRT__PRIVATE xrt_status xrt__vcounts(const xrt__vctx *v, int operands, int results);
XRT__PRIVATE xrt_status xrt__vsame(const xrt__vctx *v, int32_t a, int32_t b,
                             const char *what);
XRT__PRIVATE bool xrt__dims_are(const xrt_shape *s, const int64_t *dims,
                                int64_t rank);
XRT__PRIVATE bool xrt__same_dims(const xrt_shape *a, const xrt_shape *b);
XRT__PRIVATE unsigned xrt__elementwise_mask(xrt_opcode code);
XRT__PRIVATE xrt_status xrt__verify_elementwise(const xrt__vctx *v);
XRT__PRIVATE const xrt_ir_attr *xrt__vattr(const xrt__vctx *v, const char *name,
                                     int kind);
XRT__PRIVATE xrt_status xrt__vints(const xrt__vctx *v, const char *name,
                             bool allow_missing, const int64_t **ints,
                             int64_t *n);
XRT__PRIVATE xrt_status xrt__vdims(const xrt__vctx *v, const char *what,
                             const int64_t *dims, int64_t n, int64_t rank);
XRT__PRIVATE xrt_status xrt__vfield(const xrt__vctx *v, const xrt_ir_attr *dict,
                              const char *name, const int64_t **ints,
                              int64_t *n);
XRT__PRIVATE bool xrt__contains(const int64_t *d, int64_t n, int64_t x);
XRT__PRIVATE bool xrt__dtype_is_int(xrt_dtype t);
XRT__PRIVATE xrt_status xrt__vint(const xrt__vctx *v, const char *name,
                                  int64_t *out);
XRT__PRIVATE xrt_status xrt__vint_or(const xrt__vctx *v, const char *name,
                                     int64_t dflt, int64_t *out);
XRT__PRIVATE int64_t xrt__vfill_checked(int64_t *out, const int64_t *a,
                                        int64_t n, int64_t dflt, int64_t lo,
                                        int64_t hi);
XRT__PRIVATE int64_t xrt__dilated(int64_t n, int64_t dilation);
XRT__PRIVATE int64_t xrt__num_windows(int64_t padded, int64_t window,
                                      int64_t stride);
XRT__PRIVATE xrt_status xrt__verify_compare(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_select(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_clamp(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_convert(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_bitcast(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__viota_dimension(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_iota(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__vbroadcast_dims(const xrt__vctx *v,
                                             const int64_t *dims, int64_t n);
XRT__PRIVATE xrt_status xrt__verify_broadcast_in_dim(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_broadcast(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__vsame_elements(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_reshape(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_transpose(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_slice(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_dot(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_get_dimension_size(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_concatenate(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_pad(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_reverse(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__vregion_sig(const xrt__vctx *v, const xrt_ir_region *r,
                                   const char *what, int nargs,
                                   const xrt_ir_type *const *args, int nrets,
                                   const xrt_ir_type *const *rets);
XRT__PRIVATE xrt_status xrt__verify_reduce(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_dot_general(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_while(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__vcallee(const xrt__vctx *v, const xrt_ir_func *f,
                                     bool decomposition);
XRT__PRIVATE xrt_status xrt__verify_call(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_constant(const xrt__vctx *v);
XRT__PRIVATE xrt_status xrt__verify_custom_call(const xrt__vctx *v);

/* ---- verify_index.c ---- */
XRT__PRIVATE xrt_status xrt__verify_index(const xrt__vctx *v);

/* ---- verify_ctrl.c ---- */
XRT__PRIVATE xrt_status xrt__verify_ctrl(const xrt__vctx *v);

/* ---- verify_linalg.c ---- */
XRT__PRIVATE xrt_status xrt__verify_linalg(const xrt__vctx *v);

/* ---- verify_types.c ---- */
XRT__PRIVATE xrt_status xrt__verify_module(const xrt_ir_module *m);

/* ---- plugin.c ---- */

/* A plugin registered in a context, and the context (section 9a,
 * after section 9).  A client points at its registration's private copy
 * of the plugin's table, zero-filled beyond the plugin's struct_size, so
 * an older plugin's missing entries read as NULL. */
typedef struct xrt__plugin_reg xrt__plugin_reg;
typedef struct xrt__context xrt__context;
XRT__PRIVATE xrt_status xrt__plugin_lacks(const xrt_plugin_api *api,
                                    const char *fn);

/* Every call of a plugin function goes through this check (functions
 * returning void are skipped instead when NULL): returns XRT_UNIMPLEMENTED
 * from the enclosing function when the plugin of client c lacks fn. */
#define XRT__PLUGIN_NEED(c, fn)                                               \
  do {                                                                        \
    if (!(c)->api->fn) return xrt__plugin_lacks((c)->api, #fn);              \
  } while (0)
XRT__PRIVATE xrt_status xrt__context_acquire(xrt_context *context, const char *name,
                                       xrt__plugin_reg **out);
XRT__PRIVATE void xrt__plugin_reg_unref(xrt__plugin_reg *r);
XRT__PRIVATE const xrt_plugin_api *xrt__plugin_reg_api(const xrt__plugin_reg *r);
XRT__PRIVATE xrt_status xrt__topology_resolve(const xrt_topology *in,
                                        xrt_topology *out);
XRT__PRIVATE xrt_status xrt__plugin_check_version(const xrt__plugin_reg *r,
                                            const xrt_ir_module *m);

/* ---- handle.c ---- */

/* ======================================================================
 * 8. Handles
 *
 * Public object pointers are handles, not addresses: an index into a
 * process-wide slot table plus the slot's generation.  A released or
 * foreign handle fails the lookup instead of touching freed memory, which is
 * how xrt turns use-after-release into XRT_INVALID_ARGUMENT.  Slots live in
 * chunks that never move, so lookups take no lock.
 *
 * Buffers, executables and events are refcounted (queued work holds
 * references).  A release racing with a use on another thread either comes
 * first (the use fails cleanly) or second (the object lives until the use
 * drops its reference).  Buffers and executables are looked up and
 * referenced without a lock (xrt__hpin: their objects are recycled, never
 * freed while the client lives, and keep their handle slot across lives);
 * events take a striped lock that revoking the handle also takes.
 * ==================================================================== */

enum { XRT__H_FREE = 0, XRT__H_CLIENT, XRT__H_DEVICE, XRT__H_BUFFER,
       XRT__H_PROGRAM, XRT__H_EXECUTABLE, XRT__H_EVENT, XRT__H_SHARDED,
       XRT__H_PMAP, XRT__H_VARIABLE,
       XRT__H_CONTEXT, XRT__H_PLUGIN, XRT__H_REPORT,
       XRT__H_RDEVICE /* another process's device (section 13a) */ };
static inline void xrt__spin_lock(atomic_flag *f) {
  while (atomic_flag_test_and_set_explicit(f, memory_order_acquire))
    sched_yield(); /* held for a few instructions only */
}
static inline void xrt__spin_unlock(atomic_flag *f) {
  atomic_flag_clear_explicit(f, memory_order_release);
}
XRT__PRIVATE uintptr_t xrt__hnew(void *obj, int kind);
XRT__PRIVATE void *xrt__hget(const void *handle, int kind);
XRT__PRIVATE void xrt__hfree_handle(uintptr_t h);
XRT__PRIVATE void xrt__hkill(uintptr_t h);
XRT__PRIVATE uintptr_t xrt__hrenew(uintptr_t h, int kind);
XRT__PRIVATE atomic_flag *xrt__hstripe(const void *handle);
XRT__PRIVATE void *xrt__hpin(const void *handle, int kind, size_t refs_at,
                       bool *stale);
XRT__PRIVATE void *xrt__hrevoke(const void *handle, int kind);
XRT__PRIVATE void xrt__hfree_if_live(uintptr_t h, int kind, const void *obj);

/* ---- client.c ---- */

/* ======================================================================
 * 9. Clients and devices
 * ==================================================================== */

typedef struct xrt__client xrt__client;
typedef struct xrt__task xrt__task;

/* The client's counters (xrt_client_get_stats). */
enum { XRT__ST_ALLOCS, XRT__ST_FREES, XRT__ST_BYTES_IN_USE, XRT__ST_COPIES,
       XRT__ST_BYTES_COPIED, XRT__ST_H2D, XRT__ST_D2H, XRT__ST_EXECS,
       XRT__ST_COMPILES, XRT__ST_CACHE_HITS, XRT__ST_COUNT };

/* A device's in-order queue, served by its worker thread.  `busy` means a
 * task is running: on the worker, or inline on a caller that found the
 * queue empty (the synchronous fast path), which keeps the order.  The
 * fields are under the spin lock; the worker sleeps on work_cv only when
 * it has nothing to run, and whoever wakes it clears `sleeping`. */
typedef struct xrt__queue {
  atomic_flag lock;
  xrt__task *head, *tail;
  bool busy, stop;
  _Atomic bool sleeping;
  pthread_mutex_t mu; /* for work_cv */
  pthread_cond_t work_cv;
  bool inited, started;
  pthread_t thread;
} xrt__queue;

typedef struct xrt__device {
  xrt__client *client;
  int index;
  uintptr_t handle;
  xrt_plugin_device_desc desc;
  xrt__queue q;
} xrt__device;

typedef struct xrt__host_entry {
  char *target;
  xrt_host_fn fn;
  void *user;
} xrt__host_entry;

/* Live objects of a client, so that client release can free them. */
typedef struct xrt__link {
  struct xrt__link *prev, *next;
} xrt__link;

struct xrt__client {
  xrt_allocator allocator;
  const xrt_plugin_api *api; /* the registration's copy of the table */
  xrt__plugin_reg *reg;      /* counts this client while it lives */
  xrt_topology topology;     /* resolved at creation */
  void *pc; /* the plugin's client */
  int num_devices;
  xrt__device *devices;
  uintptr_t handle;
  pthread_mutex_t mu; /* guards the host registry */
  atomic_flag objs_lock; /* guards the object lists (a few stores) */
  xrt__link buffers, executables, events, erefs;
  /* Dead buffer objects kept for reuse, each with its handle slot: a
   * dispatch then costs no malloc, free or handle-table lock. */
  struct xrt__buffer *free_bufs;
  xrt__link free_exes; /* dead executables' shells, likewise */
  xrt__host_entry *hosts;
  int num_hosts, cap_hosts;
  /* Every event of the client completes under ev_mu and broadcasts ev_cv
   * (one pair per client: waits are rare and short on the simulator). */
  pthread_mutex_t ev_mu;
  pthread_cond_t ev_cv;
  /* Held while a multi-device launch enters its devices' queues, so that
   * launches enter every queue in the same order (else their collectives
   * could wait on each other). */
  pthread_mutex_t launch_mu;
  _Atomic uint64_t next_launch_id;
  /* xrt_client_get_stats: counted at the plugin call sites, in a block
   * per thread (st_blks, under objs_lock; see XRT__STAT) or, past
   * XRT__ST_MAXBLKS threads or out of memory, in st. */
  struct xrt__stats_blk *st_blks;
  int st_nblks;
  _Atomic uint64_t st[XRT__ST_COUNT];
  struct xrt__cache *cache; /* section 12b; NULL: no compilation cache */
  struct xrt__mp *mp; /* section 13a; NULL: this process alone */
};

/* ---- multiprocess.c ---- */
XRT__PRIVATE xrt_status xrt__mp_join(xrt__client *c, const xrt_client_options *o);
XRT__PRIVATE xrt_status xrt__mp_devices(xrt__client *c);
XRT__PRIVATE void xrt__mp_free(xrt__client *c);
XRT__PRIVATE uint64_t xrt__mp_new_launch_id(xrt__client *c);

/* ---- client.c ---- */

typedef struct xrt__stats_blk {
  struct xrt__stats_blk *next;
  uintptr_t thread; /* &xrt__tls_stats of its writer */
  _Atomic uint64_t v[XRT__ST_COUNT];
} xrt__stats_blk;

typedef struct xrt__tls_stats_cache {
  uintptr_t client; /* handle: never reused, so never a dead client's */
  xrt__stats_blk *blk;
} xrt__tls_stats_cache;
XRT__EXTERN_DATA XRT__THREAD_LOCAL_SMALL xrt__tls_stats_cache xrt__tls_stats;
XRT__PRIVATE void xrt__stat_add_slow(xrt__client *c, int i, uint64_t n);

static inline void xrt__stat_add(xrt__client *c, int i, uint64_t n) {
  if (xrt__tls_stats.client != c->handle || !c->handle) {
    xrt__stat_add_slow(c, i, n);
    return;
  }
  xrt__stats_blk *b = xrt__tls_stats.blk;
  atomic_store_explicit(&b->v[i],
                        atomic_load_explicit(&b->v[i], memory_order_relaxed) + n,
                        memory_order_relaxed);
}
XRT__PRIVATE uint64_t xrt__stat_sum(xrt__client *c, int i);

/* Adds n to the client's counter XRT__ST_<field>. */
#define XRT__STAT(c, field, n) \
  xrt__stat_add((c), XRT__ST_##field, (uint64_t)(n))
XRT__PRIVATE void xrt__link_init(xrt__link *l);
XRT__PRIVATE void xrt__link_add(xrt__link *head, xrt__link *l);
XRT__PRIVATE void xrt__link_remove(xrt__link *l);
XRT__PRIVATE xrt__client *xrt__client_get(const xrt_client *c);
XRT__PRIVATE xrt__device *xrt__device_get(const xrt_device *d);

/* ---- hostfn.c ---- */
XRT__PRIVATE xrt_status xrt__host_register_builtins(xrt__client *c);
/* The numeric attributes of custom_call @target (n bytes) when target is
 * a check op: located INVALID_ARGUMENT if one is out of its range. */
XRT__PRIVATE xrt_status xrt__check_attrs_verify(const xrt_ir_op *op,
                                                const char *target, size_t n);

/* ---- pmap.c ---- */
XRT__PRIVATE void xrt__client_free(xrt__client *c);

/* ---- compile_cache.c ---- */
XRT__PRIVATE xrt_status xrt__cache_create(xrt__client *c,
                                    const xrt_client_options *o);
XRT__PRIVATE void xrt__cache_free(xrt__client *c);

/* ---- queue.c ---- */
XRT__PRIVATE xrt_status xrt__queues_start(xrt__client *c);

/* ---- plugin.c ---- */

/* ---------------------------------------------------------------------
 * 9a. Contexts and plugins: registrations, loading, topology, support
 *
 * A context's registry is an array of registrations under its mutex,
 * which also guards every registration's live-client count (a client
 * takes its count under it at creation, so unload and exclusive access
 * see a consistent number).  Loading holds the mutex across dlopen, so two
 * threads loading one file get one registration.
 * ------------------------------------------------------------------- */

struct xrt__plugin_reg {
  uintptr_t handle;            /* the xrt_plugin handle */
  xrt__context *ctx;
  char *name;                  /* registration name */
  char *path;                  /* as given; "" for a linked table */
  char *real;                  /* the path dlopen got; NULL if linked */
  xrt__os_file_id id;          /* the file's identity, for duplicates */
  void *dl;                    /* dlopen handle; NULL if linked */
  const xrt_plugin_api *table; /* the plugin's own table */
  size_t table_size;           /* its struct_size */
  xrt_plugin_api api;          /* private copy, zero-filled past table_size */
  xrt_plugin_platform_desc desc;
  int live_clients;            /* under ctx->mu */
  bool pjrt_wrapper;           /* table made by xrt_pjrt_plugin_wrap */
};

struct xrt__context {
  uintptr_t handle;
  xrt_allocator allocator;
  pthread_mutex_t mu;
  xrt__plugin_reg **regs;
  int num_regs, cap_regs;
  bool is_default;
  /* The default context's XRT_PLUGINS failure, reported when a client
   * asks for a plugin it lacks. */
  char env_error[512];
};

/* ---- program.c ---- */
XRT__PRIVATE xrt_status xrt__find_entry(const xrt_ir_module *m, const char *entry,
                                  int32_t *out);

/* ---- queue.c ---- */

/* ======================================================================
 * 9b. Device queues and events
 *
 * Every device has a worker thread and an in-order queue of tasks (host
 * writes and reads, copies, execution participants, late event callbacks);
 * the core calls the plugin's (synchronous) functions from these threads.
 * A synchronous call whose device queue is empty and whose inputs are
 * ready runs inline on the calling thread while it holds the device
 * (xrt__device_hold), which keeps both the order and dispatch cheap.
 *
 * Events are refcounted; each user reference is its own handle (an
 * xrt__eref), so that two references to one event release independently.
 * A task waiting on an input event blocks its device's worker: inputs are
 * always produced by work enqueued earlier, so waits cannot form a cycle.
 * ==================================================================== */

#define XRT__MSG_CAP 1152

typedef struct xrt__cb {
  struct xrt__cb *next;
  xrt_event_callback fn;
  void *user;
} xrt__cb;

typedef struct xrt__event {
  xrt__link link; /* first: the client's list */
  xrt__client *client;
  _Atomic int refs;
  _Atomic int done;   /* 1 once code and message are final */
  int home;           /* device whose worker runs late callbacks */
  xrt_status code;
  bool cb_running;    /* a thread is running the callbacks (under ev_mu) */
  xrt__cb *cbs, **cbs_tail;
  char message[XRT__MSG_CAP];
} xrt__event;

typedef struct xrt__eref {
  xrt__link link; /* first: the client's list */
  xrt__event *ev;
  uintptr_t handle;
} xrt__eref;
XRT__PRIVATE xrt__event *xrt__event_new(xrt__client *c, int home);
XRT__PRIVATE void xrt__event_ref(xrt__event *ev);
XRT__PRIVATE void xrt__event_destroy(xrt__event *ev);
XRT__PRIVATE void xrt__event_unref(xrt__event *ev);
XRT__PRIVATE bool xrt__event_done(const xrt__event *ev);
XRT__PRIVATE void xrt__event_run_callbacks(xrt__event *ev);
XRT__PRIVATE void xrt__event_complete(xrt__event *ev, xrt_status code,
                                const char *msg);
XRT__PRIVATE xrt_status xrt__event_wait(xrt__event *ev);
XRT__PRIVATE xrt_status xrt__event_publish(xrt__event *ev, xrt_event **out);

/* ---- tasks ---- */

enum { XRT__T_WRITE, XRT__T_READ, XRT__T_COPY, XRT__T_EXEC,
       XRT__T_CALLBACKS, XRT__T_FAULT };

typedef struct xrt__buffer xrt__buffer;
typedef struct xrt__executable xrt__executable;

/* The shared state of a multi-participant launch. */
typedef struct xrt__launch {
  _Atomic int pending;   /* participants not yet done */
  xrt__event *done;      /* completes when pending reaches 0 */
  xrt_status code;       /* first failure (under the client's ev_mu) */
  char message[XRT__MSG_CAP];
} xrt__launch;

struct xrt__task {
  xrt__task *next;
  int kind;
  xrt__event *done;      /* completed by the task; owned reference */
  xrt__buffer *src, *dst; /* owned references */
  const void *host_src;  /* WRITE */
  void *host_dst;        /* READ */
  int64_t steps;         /* FAULT */
  /* EXEC: one participant of a launch. */
  xrt__executable *exe;
  xrt__launch *launch;   /* NULL: a launch of its own (done is its event) */
  uint64_t launch_id;
  int32_t replica, partition;
  int num_args, num_outs;
  xrt__buffer **bufs;    /* args then outputs, owned references */
  void **mems;           /* the same, as device memories */
};

/* ---- exec.c ---- */
XRT__PRIVATE void xrt__task_run(xrt__device *d, xrt__task *t);

/* ---- queue.c ---- */
XRT__PRIVATE void xrt__enqueue(xrt__device *d, xrt__task *t);
/* Takes the device for inline work if its queue is empty and idle. */
static inline bool xrt__device_hold(xrt__device *d) {
  xrt__queue *q = &d->q;
  xrt__spin_lock(&q->lock);
  bool ok = !q->head && !q->busy;
  if (ok) q->busy = true;
  xrt__spin_unlock(&q->lock);
  return ok;
}
XRT__PRIVATE void xrt__device_unhold(xrt__device *d);
XRT__PRIVATE void xrt__queues_stop(xrt__client *c);
XRT__PRIVATE xrt_status xrt__task_start(xrt__client *c, int kind, size_t extra,
                                  int home, xrt__task **out);

/* ---- buffer.c ---- */

/* ======================================================================
 * 10. Buffers
 *
 * A buffer is refcounted: its handle holds one reference and every queued
 * task that reads or writes it holds one, so releasing the handle while
 * work is pending is safe (the memory goes when the last task is done).
 * `ready` is NULL for a buffer that was complete when created (the inline
 * paths allocate no event), else the event of the work producing it;
 * failed, it poisons the buffer.
 * ==================================================================== */

struct xrt__buffer {
  xrt__link link; /* first: the client's list */
  xrt__client *client;
  _Atomic int refs;
  int device;
  xrt_shape shape;
  size_t bytes;
  void *mem;
  xrt__event *ready; /* owned reference, or NULL: ready and OK */
  uintptr_t handle;
  bool live;                /* holds device memory */
  struct xrt__buffer *next_free; /* on the client's free list */
  struct DLManagedTensor *dl; /* zero-copy import: deleted after buffer_free */
};
XRT__PRIVATE void xrt__buffer_unref(xrt__buffer *b);
XRT__PRIVATE xrt__buffer *xrt__buffer_acquire(const xrt_buffer *handle);
XRT__PRIVATE xrt__buffer *xrt__buffer_obj(xrt__client *c);
XRT__PRIVATE void xrt__buffer_recycle(xrt__client *c, xrt__buffer *b);
XRT__PRIVATE xrt_status xrt__buffer_publish(xrt__client *c, xrt__buffer *b,
                                      xrt__event *ready, xrt__buffer **out);
XRT__PRIVATE xrt_status xrt__buffer_new(xrt__client *c, int device,
                                  const xrt_shape *shape, size_t bytes,
                                  xrt__event *ready, xrt__buffer **out);

/* ---- dlpack.c ---- */
XRT__PRIVATE void xrt__dlpack_freed(xrt__buffer *b);

/* ---- buffer.c ---- */
XRT__PRIVATE void xrt__buffer_discard(xrt__buffer *b);
/* The status of a buffer's producer without waiting: XRT_OK when ready,
 * XRT_UNAVAILABLE while pending, else its error (message in the event). */
static inline xrt_status xrt__buffer_state(const xrt__buffer *b) {
  if (!b->ready) return XRT_OK;
  if (!xrt__event_done(b->ready)) return XRT_UNAVAILABLE;
  return b->ready->code;
}

/* ---- exec.c ---- */
XRT__PRIVATE void xrt__task_free(xrt__task *t, xrt__client *c);

/* ---- hostfn.c ---- */
XRT__PRIVATE bool xrt__host_lookup(xrt__client *c, const char *target,
                             xrt_host_fn *fn, void **user);

/* ---- program.c ---- */

/* ======================================================================
 * 12. Programs and compilation
 * ==================================================================== */

/* A parsed, verified program.  Executables hold a reference to it, so the
 * IR they were compiled from outlives the user's handle. */
typedef struct xrt__program {
  xrt_allocator allocator;
  xrt__arena arena;
  xrt_ir_module *module;
  const xrt_ir_op **custom_calls; /* by op->callee */
  _Atomic int refs;
  uintptr_t handle;
  /* XXH3-128 of the text as the cache key reads it (section 12b), without
   * [0] and with [1] debug locations; set by xrt_program_parse. */
  uint64_t text_digest[2][2];
  bool has_digest;
  const xrt__shard_info *shard; /* sharding_annot.c; NULL: no shardings */
  /* Shape-polymorphic (refine.c): parsed but not verified; each compile
   * refines a copy, whose base is this program (it holds a reference). */
  bool dynamic;
  struct xrt__program *base;
  /* The first construct xrt reads but does not run (see
   * XRT__OP_EXTRA_FIRST), located ("FILE:L:C: what"): the program was
   * not verified, and compiling it is UNIMPLEMENTED with this; NULL:
   * none. */
  const char *unsupported;
} xrt__program;

/* Refcounted like buffers: queued executions hold references. */
struct xrt__executable {
  xrt__link link; /* first: the client's list */
  xrt__client *client;
  _Atomic int refs;
  xrt__program *program;
  int32_t entry;
  void *pexe;
  xrt_host_binding *bindings;
  int num_inputs, num_outputs;
  xrt_shape *inputs, *outputs;
  int32_t num_replicas, num_partitions;
  int32_t *assignment; /* device of each logical id */
  /* A cached executable's handles share what the plugin compiled (12b):
   * the fields above are then borrowed from it, and program may be NULL
   * (loaded from a cache store). */
  struct xrt__exe_shared *shared;
  const char *name, *module_name; /* the entry function, the module */
  /* Cheap and self-contained (see xrt__region_cheap): a launch whose
   * devices are idle may run its participants one after another on the
   * calling thread, which beats waking a worker per device. */
  bool inline_ok;
  uintptr_t handle;
};
XRT__PRIVATE const char *xrt__host_target(const xrt_ir_op *op);

/* ---- compile_cache.c ---- */
XRT__PRIVATE bool xrt__cache_wanted(const xrt__client *c,
                              const xrt_compile_options *o);
XRT__PRIVATE xrt_status xrt__cache_compile(xrt__client *c, const char *text,
                                     size_t len, xrt__program *prog,
                                     const xrt_compile_options *o,
                                     xrt_executable **out);
XRT__PRIVATE void xrt__cache_digest_program(xrt__program *p, const char *text,
                                      size_t len);

/* ---- program.c ---- */
XRT__PRIVATE void xrt__program_unref(xrt__program *p);
XRT__PRIVATE xrt_status xrt__program_index(xrt__program *p);
/* refine.c: whether a parsed module needs refining before it verifies (a
 * `?` dimension, a real_dynamic_slice), and the refinement of an
 * executable's program for the compile options (e->program becomes the
 * refined copy). */
XRT__PRIVATE bool xrt__refine_needed(const xrt_ir_module *m);
XRT__PRIVATE xrt_status xrt__refine_executable(struct xrt__executable *e,
                                               const xrt_compile_options *o);
XRT__PRIVATE xrt_status xrt__program_create(xrt_allocator a, const char *text,
                                      size_t len,
                                      const xrt_compile_options *options,
                                      xrt__program **out);

/* ---- compile_cache.c ---- */
XRT__PRIVATE void xrt__exe_shared_unref(struct xrt__exe_shared *sh);

/* ---- program.c ---- */
XRT__PRIVATE void xrt__executable_destroy(xrt__executable *e);
XRT__PRIVATE xrt__executable *xrt__executable_obj(xrt__client *c);

/* ---- multiprocess.c ---- */
XRT__PRIVATE xrt_status xrt__mp_executable_launch(xrt__executable *e,
                                            const xrt_compile_options *o);
XRT__PRIVATE void xrt__mp_compile_args(const xrt__executable *e,
                                 xrt_plugin_compile_args *a);
XRT__PRIVATE xrt_device *xrt__mp_device_of(const xrt__executable *e, int logical);
XRT__PRIVATE xrt_status xrt__mp_not_here(const xrt__executable *e, int logical);
XRT__PRIVATE xrt_status xrt__mp_execute_multi(
    xrt__executable *e, xrt_buffer *const *const *argument_lists,
    int num_lists, int num_args, xrt_buffer **const *output_lists,
    int num_outputs, const xrt_execute_options *options,
    xrt_event **out_done);

/* ---- program.c ---- */
XRT__PRIVATE xrt_status xrt__executable_build(xrt__executable *e,
                                        const xrt_compile_options *o);
XRT__PRIVATE xrt_status xrt__executable_publish(xrt__executable *e);
XRT__PRIVATE xrt_status xrt__compile(xrt__client *c, xrt__program *p,
                               const xrt_compile_options *o,
                               xrt_executable **out);
XRT__PRIVATE xrt__executable *xrt__executable_get(const xrt_executable *e);
XRT__PRIVATE xrt__executable *xrt__executable_acquire(const xrt_executable *h);

/* ---- compile_cache.c ---- */

/* ======================================================================
 * 12b. Compilation cache
 *
 * Keys.  XXH3-128 over: a format tag; the client's digest (plugin name
 * and version, device count, device kinds, and the topology fields that
 * do not name this process: process_count, local_world_size, so that the
 * processes of one job share a persistent store; for a client of several
 * processes, every process's device count instead of the device count
 * and local_world_size, which may differ between processes); the options
 * that change the result (entry, num_replicas, num_partitions, the device
 * assignment; not filename or line_offset); the program text.  Unless
 * cache_keep_locations, the text is read as tokens: comments (// to the
 * end of the line), debug locations (loc(...) with nested parentheses
 * and strings, with the whitespace before them, and the "#locN =" of
 * location alias lines) dropped, and every other run of whitespace read
 * as one space, so that programs differing only in those share a key.  String literals are read verbatim.
 *
 * Hits must cost about one hash of the text (the benchmark is 2 us and 3x
 * XXH3 for 10 KB), so a compile first takes a fingerprint: XXH3-128 of
 * the raw bytes and the options, looked up in a small direct-mapped memo
 * that maps fingerprints to canonical keys.  Only a memo miss reads the
 * text as tokens.  A parsed program (xrt_compile_program) carries both
 * text digests from xrt_program_parse.
 *
 * In memory.  A hash table of entries by key under one mutex per client.
 * A miss inserts a COMPILING entry and compiles outside the lock; callers
 * of that key meanwhile wait on the condition variable and count as hits.
 * A finished entry holds a reference on an xrt__exe_shared (what the
 * plugin compiled, the program it came from, shapes, launch shape and
 * host bindings); every caller gets its own executable handle borrowing
 * those fields (section 12's xrt__executable, its `shared` set), so
 * releasing one handle never affects another, and execution reads the
 * same fields as before.  Failures that depend only on the program and
 * options (not NOT_FOUND: a host function registered later may fix it;
 * not RESOURCE_EXHAUSTED, INTERNAL and other transient codes) are kept
 * with their status and message.  A hit on an executable that calls the
 * host checks that the client's host functions for its targets are still
 * those it was compiled with; if one changed it compiles afresh.
 *
 * Bytes.  An entry is charged: its own records (entry, shared object,
 * shapes, device assignment, host targets), the arena of the parsed
 * program it keeps alive, the same again for the plugin's executable (the
 * core cannot see its size; plans are about as large as the IR), or, for
 * an executable loaded from the store, twice the payload; a failure its
 * message.  Entries beyond compile_cache_bytes are dropped least recently
 * used first; an entry larger than the whole budget is not kept.
 *
 * Persistent store.  After an in-memory miss, when the client has a
 * cache_store and the plugin serializes (ABI 1.1), store->load(key, "name
 * version") is tried.  The payload is this core's format (below) wrapping
 * the plugin's bytes; every field is checked, and anything wrong is a
 * warning, a store error and a normal compile.  A compile is then offered
 * to store->save with its duration.  Aliases (raw text to key, see
 * "aliases" below) spare a fresh process the read of the text as tokens.
 * A multi-process client shares the store: stored device assignments are
 * global ids, placed in each process on load (its participants' processes
 * go to the plugin as at compile), and only process 0 saves.
 * ==================================================================== */

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ---- multiprocess.c ---- */
XRT__PRIVATE int xrt__cache_ndev(const xrt__client *c);
XRT__PRIVATE void xrt__cache_mp_digest(const xrt__client *c, XXH3_state_t *st);
XRT__PRIVATE void xrt__cache_mp_place(const xrt__client *c, int32_t *a, int64_t n);

/* ---- compile_cache.c ---- */

/* What compiled handles share (see above). */
typedef struct xrt__exe_shared {
  _Atomic int refs;
  xrt__client *client;
  xrt__program *program; /* NULL: loaded from a store */
  void *pexe;
  int32_t entry;         /* -1 when program is NULL */
  xrt_host_binding *bindings;
  char **targets;        /* the host target of each binding */
  int32_t num_bindings;
  int num_inputs, num_outputs;
  xrt_shape *inputs, *outputs;
  int32_t num_replicas, num_partitions;
  int32_t *assignment;
  bool inline_ok;
  char *name, *module_name;
  /* The alias id (see "aliases") of the text it was compiled from; zero
   * when none.  An alias is trusted only for an entry that records it. */
  uint64_t source[2];
} xrt__exe_shared;

typedef struct xrt__centry {
  struct xrt__centry *hnext;             /* hash chain */
  struct xrt__centry *prev, *next;       /* LRU, most recent first */
  uint64_t key[2];
  int state;                             /* XRT__CE_* */
  int pins;                              /* the compiler and its waiters */
  bool in_table, in_lru, freeing;
  xrt__exe_shared *sh;                   /* DONE */
  xrt_status code;                       /* FAILED */
  char *message;
  size_t bytes;
} xrt__centry;

/* One memo slot: a fingerprint and the key it stands for. */
typedef struct xrt__memo {
  uint64_t fp[2], key[2];
} xrt__memo;

typedef struct xrt__cache {
  pthread_mutex_t mu;
  pthread_cond_t cv;  /* a COMPILING entry finished */
  size_t budget;      /* 0: no in-memory cache (the store alone) */
  const xrt_cache_store *store; /* NULL, or usable with this plugin */
  char identity[160]; /* "name version" */
  uint64_t digest[2]; /* the client's part of every key */
  xrt__centry **buckets;
  size_t nbuckets, count, bytes;
  xrt__centry lru;    /* sentinel */
  xrt__memo *memo;    /* XRT__MEMO_SLOTS, allocated at first use */
  _Atomic uint64_t hits, misses, evictions, failures_cached, store_hits,
      store_misses, store_writes, store_errors;
} xrt__cache;

/* ---- exec.c ---- */
#if defined(__GNUC__)
XRT_PRINTF_FORMAT(2, 3)
#endif
XRT__PRIVATE void xrt__msgf(char *dst, const char *fmt, ...);
XRT__PRIVATE const char *xrt__exe_name(const xrt__executable *e);

/* ---- program.c ---- */
XRT__PRIVATE void xrt__executable_unref(xrt__executable *e);

/* ---- exec.c: the dispatch of libxrt_pjrt.so ----
 * Called by src/pjrt_plugin (which declares them again with opaque
 * pointers, and says what they do): hidden, as XRT__PRIVATE, but never
 * static, since in the generated single files that plugin
 * (xrt_pjrt_plugin.c) is a file apart from the core (xrt.c). */
#define XRT__PJRT_API XRT__OS_API
XRT__PJRT_API void *xrt__pjrt_device_obj(const xrt_device *device);
XRT__PJRT_API void *xrt__pjrt_executable_obj(const xrt_executable *exe);
XRT__PJRT_API void *xrt__pjrt_buffer_hold(const xrt_buffer *buffer);
XRT__PJRT_API void xrt__pjrt_buffer_unref(void *obj);
XRT__PJRT_API xrt_buffer *xrt__pjrt_buffer_publish(void *obj);
XRT__PJRT_API xrt_status xrt__pjrt_execute(void *exe, void *device,
                                           void *const *args, int num_args,
                                           void **outputs, int num_outputs,
                                           const size_t *output_bytes,
                                           bool *ran);

/* ---- exec.c ---- */

/* Everything a multi-device launch allocates before it is enqueued. */
typedef struct xrt__multi {
  int n;
  xrt__device *devs[1024];
  xrt__buffer **bufs;  /* n * num_inputs argument references */
  int num_acquired;    /* lists whose arguments bufs holds */
  xrt__task **tasks;
  xrt__launch *launch;
} xrt__multi;
XRT__PRIVATE void xrt__multi_free(xrt__executable *e, xrt__multi *m, bool enqueued);
XRT__PRIVATE xrt_status xrt__multi_fill(xrt__executable *e, xrt__multi *m,
                                  const int *lids,
                                  xrt_buffer *const *const *lists,
                                  const xrt_execute_options *o,
                                  const uint64_t *fixed_id);
XRT__PRIVATE xrt_status xrt__multi_start(xrt__executable *e, xrt__multi *m,
                                   const int *lids, xrt_buffer **const *outs,
                                   xrt_event **out_done);

/* ---- multiprocess.c ---- */

/* ---- joining ---- */

/* Another process's device. */
typedef struct xrt__rdev {
  uintptr_t handle;
  xrt__client *client;
  int gid, process;
} xrt__rdev;

struct xrt__mp {
  xrt_transport tp;
  int me, nproc;
  int ndev;          /* devices of every process */
  int *first;        /* nproc + 1: each process's first global id */
  xrt__rdev *rdevs;  /* ndev (this process's entries unused) */
  _Atomic uint64_t next_launch;
  _Atomic uint64_t next_coll; /* the core's collectives, counted alike */
};
XRT__PRIVATE xrt__rdev *xrt__rdev_get(const xrt_device *d);
XRT__PRIVATE uint64_t xrt__mp_next_tag(xrt__client *c);
XRT__PRIVATE xrt_status xrt__mp_exchange(xrt__client *c, uint64_t tag,
                                   const xrt_transport_msg *sends, int nsend,
                                   const xrt_transport_msg *recvs, int nrecv,
                                   const char *what);
XRT__PRIVATE xrt_status xrt__mp_allgather(xrt__client *c, uint64_t tag,
                                    const void *in, void *out, size_t bytes,
                                    const char *what);

/* ---- sharding.c ---- */

/* ======================================================================
 * 13b. Sharding specs, sharded arrays and pmap
 *
 * As JAX's pmap defines them (jax/_src/sharding_specs.py,
 * ShardingSpec.indices):
 *   - spec math: structure checks, piece shapes and where each device's
 *     piece starts in the logical array;
 *   - host split and assembly (strided copies, overlapped transfers);
 *   - the sharded-array object (a handle kind of its own);
 *   - xrt_execute_sharded over xrt_execute_multi;
 *   - pmap: a compile cache keyed by argument signature;
 *   - across processes ("Across processes" below): pieces held elsewhere are
 *     NULL, assembly to host is collective, launches go through 13a.
 * Only the public buffer, event, compile and execute calls are used, plus
 * the handle table and the executable's client.
 * ==================================================================== */

/* ---- spec math ---- */

/* Sharded axes of a spec, numbered in dimension order: an Unstacked
 * dimension gives one, a Chunked dimension one per chunk factor. */
typedef struct xrt__spec_axes {
  int n;
  int64_t size[XRT_MAX_MESH_DIMS];
  int mesh_dim[XRT_MAX_MESH_DIMS]; /* the mesh dimension that walks it */
} xrt__spec_axes;
XRT__PRIVATE xrt_status xrt__spec_check(const xrt_sharding_spec *spec,
                                  const xrt_shape *logical,
                                  xrt__spec_axes *ax, int64_t *out_devices);
XRT__PRIVATE xrt_shape xrt__spec_piece_shape(const xrt_sharding_spec *spec,
                                       const xrt_shape *logical);
XRT__PRIVATE void xrt__spec_locate(const xrt_sharding_spec *spec,
                             const xrt__spec_axes *ax,
                             const xrt_shape *logical, int64_t k,
                             int64_t *start, int64_t *piece);
XRT__PRIVATE void xrt__spec_extent(const xrt_sharding_spec *spec,
                             const xrt_shape *logical, int64_t *ext);

/* ---- strided copies between a logical array and one dense piece ---- */

/* A box [start, start + ext) of a row-major array, reduced to runs: dims
 * 0..outer-1 are walked, each step moves one contiguous run of run_bytes. */
typedef struct xrt__box {
  int rank, outer;
  size_t run_bytes;
  int64_t stride[XRT_MAX_RANK]; /* bytes, of the logical array */
  int64_t start[XRT_MAX_RANK], ext[XRT_MAX_RANK];
  size_t offset;                /* of the box's first element */
  bool empty;
} xrt__box;
XRT__PRIVATE void xrt__box_copy(const xrt__box *b, char *array, char *piece,
                          bool to_piece);

/* ---- sharded arrays ---- */

typedef struct xrt__sharded {
  xrt__link link; /* first: the list of live arrays */
  xrt__client *client;
  uintptr_t handle;
  xrt_shape logical, piece;
  xrt_sharding_spec spec;
  xrt__spec_axes axes;
  int n;
  xrt_buffer **bufs;    /* owned, in mesh order */
  xrt_device **devices; /* of each piece */
} xrt__sharded;
XRT__PRIVATE xrt__sharded *xrt__sharded_get(const xrt_sharded_array *a);
XRT__PRIVATE void xrt__sharded_free(xrt__sharded *a, bool release_buffers);
XRT__PRIVATE void xrt__sharded_release_all(xrt__client *c);
XRT__PRIVATE xrt_status xrt__sharded_new(xrt__client *c, const xrt_shape *logical,
                                   const xrt_sharding_spec *spec,
                                   const xrt__spec_axes *ax,
                                   xrt_buffer *const *bufs, int n,
                                   xrt__sharded **out);

/* A failure's code and message, kept across later calls that may set
 * their own. */
typedef struct xrt__saved_error {
  xrt_status code;
  char message[XRT__ERROR_MAX];
} xrt__saved_error;
XRT__PRIVATE void xrt__save_error(xrt__saved_error *e, xrt_status code);
XRT__PRIVATE xrt_status xrt__restore_error(const xrt__saved_error *e);
XRT__PRIVATE void xrt__piece_box(const xrt_sharding_spec *spec,
                           const xrt__spec_axes *ax, const xrt_shape *logical,
                           int k, xrt__box *box);
XRT__PRIVATE xrt_status xrt__mp_to_host(xrt__client *c, const xrt_shape *logical,
                                  const xrt_sharding_spec *spec,
                                  const xrt__spec_axes *ax, int n,
                                  xrt_buffer *const *bufs,
                                  xrt_device *const *devices, void *dst,
                                  size_t dst_bytes);
XRT__PRIVATE xrt_status xrt__sharded_args(xrt_sharded_array *const *args,
                                    int num_args, xrt__sharded **out);
XRT__PRIVATE xrt_status xrt__output_spec(xrt_executable *exe,
                                   const xrt_execute_options *o, int j, int n,
                                   xrt_sharding_spec *spec, xrt_shape *logical,
                                   xrt__spec_axes *ax);

/* ---- variable.c ---- */
XRT__PRIVATE void xrt__variables_release_all(xrt__client *c);

/* ---- dlpack.c ---- */
XRT__PRIVATE void xrt__dlpack_client_gone(xrt__client *c);

/* ---- npy.c ---- */
XRT__PRIVATE xrt_status xrt__npy_read_host(const xrt_allocator *a, const char *path,
                                     const xrt_shape *want, xrt_shape *shape,
                                     void **data, size_t *bytes);
XRT__PRIVATE xrt_status xrt__npy_write_host(const char *path, const xrt_shape *shape,
                                      const void *data, size_t bytes);

/* ---- variable.c ---- */
XRT__PRIVATE void xrt__region_host(const xrt_plugin_copy_region_args *a);
XRT__PRIVATE xrt_status xrt__region_copy(xrt__client *c, xrt__buffer *src,
                                   xrt__buffer *dst, int rank,
                                   const int64_t *src_dims,
                                   const int64_t *src_start,
                                   const int64_t *dst_dims,
                                   const int64_t *dst_start,
                                   const int64_t *ext);
XRT__PRIVATE void xrt__piece_release(xrt_buffer *h);

/* ---- the variable object ---- */

typedef struct xrt__var {
  xrt__link link; /* first: the list of live variables */
  xrt__client *client;
  xrt_allocator al; /* the client's: frees the variable, even after it */
  uintptr_t handle;
  int refs;       /* under xrt__vars_mu: the handle's, and each user's */
  pthread_mutex_t mu; /* the variable's lock (executes, reshards, reads) */
  bool dead;      /* released: pieces gone */
  char *name;
  xrt_shape logical, piece;
  xrt_sharding_spec spec;
  xrt__spec_axes axes;
  int n;
  xrt_buffer **bufs;    /* owned, in mesh order */
  xrt_device **devices;
  uint64_t key;
} xrt__var;
XRT__PRIVATE xrt__var *xrt__var_acquire(const xrt_variable *h);
XRT__PRIVATE void xrt__var_unref(xrt__var *v);
XRT__PRIVATE uint64_t xrt__key_mix(uint64_t h, uint64_t x);

/* A checked target format. */
typedef struct xrt__vformat {
  xrt_sharding_spec spec;
  xrt__spec_axes axes;
  xrt_shape piece;
  int n;
  xrt_device *const *devices; /* borrowed from the caller */
  uint64_t key;
} xrt__vformat;
XRT__PRIVATE xrt_status xrt__vformat_check(xrt__client *c, const xrt_shape *logical,
                                     const xrt_variable_format *f,
                                     xrt__vformat *out);
XRT__PRIVATE xrt_status xrt__var_new(xrt__client *c, const char *name,
                               const xrt_shape *logical, const xrt__vformat *f,
                               xrt_buffer *const *bufs, xrt__var **out);

/* ---- variable_mp.c ---- */
XRT__PRIVATE xrt_status xrt__mpv_create(xrt__client *c, const char *name,
                                  const xrt_shape *logical, const void *data,
                                  const xrt__vformat *f,
                                  xrt_variable **out_variable);

/* ---- variable.c ---- */
XRT__PRIVATE xrt_status xrt__var_open(const xrt_variable *h, const char *fn,
                                xrt__var **out);
XRT__PRIVATE void xrt__var_close(xrt__var *v);
XRT__PRIVATE xrt_status xrt__var_view(xrt__var *v, xrt__sharded **out);
XRT__PRIVATE xrt_status xrt__var_read(xrt__var *v, void *dst, size_t dst_bytes);
XRT__PRIVATE void xrt__vars_lock(xrt__var **sorted, int n);
XRT__PRIVATE void xrt__vars_unlock(xrt__var **sorted, int n);

/* ---- variable_reshard.c ---- */


/* ---- reshard ----
 *
 * Plan, per variable: each new piece is either an old piece kept in place
 * (same device, same box, same shape: moved, not copied) or a new buffer
 * filled by box copies from the old pieces that overlap it, each read from
 * a replica on the same device when there is one, else from replicas
 * spread by destination.  Copies run in parallel over destination pieces
 * (plugin region copies, issued directly: every piece involved is owned by
 * a locked variable and waited ready first).  The commit swaps the piece
 * arrays under the locks of all the variables, so it cannot fail.
 *
 * Memory rule.  First every new piece is allocated while the old ones
 * live; a failure of any step then frees the new pieces and leaves every
 * variable as it was.  When an allocation fails with RESOURCE_EXHAUSTED,
 * the staged plan runs instead: every variable's logical array is first
 * copied to host memory (no host memory: RESOURCE_EXHAUSTED, nothing
 * changed); only then are the old pieces that the commit would drop
 * anyway freed, and the new pieces allocated and filled from the host
 * copy.  If that fails, the new pieces are freed and the old ones rebuilt
 * from the host copy into the memory just freed, so the variables end in
 * their old format with their data (RESOURCE_EXHAUSTED or the fault is
 * returned).  Only if that rebuild itself fails (another thread took the
 * memory meanwhile, or a fault hits the re-upload) is XRT_DATA_LOSS
 * returned, naming the variable. */

typedef struct xrt__rs_copy {
  int src; /* old piece index */
  int64_t src_start[XRT_MAX_RANK], dst_start[XRT_MAX_RANK];
  int64_t ext[XRT_MAX_RANK];
} xrt__rs_copy;

typedef struct xrt__rs_piece {
  int keep;        /* the old piece kept in place, or -1 */
  xrt_buffer *buf; /* the new piece until the commit (NULL when kept) */
  int ncopies;
  xrt__rs_copy *copies;
} xrt__rs_piece;

typedef struct xrt__rs_var {
  xrt__var *v;
  xrt__vformat f;
  bool noop;
  int64_t old_ext[XRT_MAX_RANK], new_ext[XRT_MAX_RANK];
  xrt__rs_piece *pieces; /* [f.n] */
  bool *kept;            /* [v->n]: old pieces moved into the new format */
  xrt_buffer **new_bufs; /* [f.n], made before the commit (which cannot
                            fail) */
  xrt_device **new_devs;
} xrt__rs_var;
XRT__PRIVATE xrt_status xrt__rs_plan(xrt__rs_var *r);
XRT__PRIVATE xrt_status xrt__var_wait_ready(xrt__var *v);
XRT__PRIVATE void xrt__rs_free_new(xrt__rs_var *rs, int nv);
XRT__PRIVATE void xrt__rs_commit(xrt__rs_var *r);

/* ---- variable_mp.c ---- */
XRT__PRIVATE xrt_status xrt__mpv_reshard(xrt__rs_var *rs, int nv,
                                   const xrt_reshard_options *options,
                                   xrt_status checked);

/* ---- variable_reshard.c ---- */

/* ---- execution over variables ---- */

/* Scratch of one xrt_execute_variables call: arrays of its argument and
 * output counts, one zeroed heap block (xrt_execute_variables). */
typedef struct xrt__xv_call {
  xrt__var **vars;    /* per argument, NULL for arrays (referenced) */
  xrt__var **uniq;    /* distinct variables, locked in handle order */
  int nuniq;
  xrt__sharded **views;
  xrt_sharded_array **arrays;
  const xrt_sharding_spec **specs; /* per output */
  xrt_sharded_array **outs;        /* per output */
} xrt__xv_call;
XRT__PRIVATE xrt_status xrt__xv_acquire(const xrt_variable_arg *args, int num_args,
                                  xrt__xv_call *k);
XRT__PRIVATE xrt_status xrt__xv_check_updates(xrt_executable *exe,
                                        const xrt__xv_call *k, int num_args,
                                        const int *updates, int num_outputs);
XRT__PRIVATE xrt_status xrt__xv_views(const xrt_variable_arg *args, int num_args,
                                xrt__xv_call *k);
XRT__PRIVATE xrt_status xrt__xv_run(xrt_executable *exe, xrt__xv_call *k,
                              int num_args, const int *updates,
                              xrt_sharded_array **outs, int num_outputs,
                              const xrt_execute_options *options);
XRT__PRIVATE void xrt__xv_donate(xrt__var *v, xrt_sharded_array *out);

/* ---- variable_mp.c ---- */
XRT__PRIVATE xrt_status xrt__mpv_agree(xrt__client *c, xrt_status local,
                                 uint64_t digest, int32_t work,
                                 int32_t *any_work, const char *what);
XRT__PRIVATE xrt_status xrt__mpv_upload(xrt__client *c, const xrt_shape *logical,
                                  const xrt__vformat *f, const char *host,
                                  int k, xrt_buffer **out);
XRT__PRIVATE xrt_status xrt__mpv_execute(xrt_executable *exe,
                                   const xrt_variable_arg *args, int na,
                                   xrt__xv_call *k, const int *updates,
                                   xrt_sharded_array **outputs, int no,
                                   const xrt_execute_options *options);

/* ---- dlpack.c ---- */

typedef struct xrt__dl_device {
  int device_type; /* DLDeviceType: an enum, int-sized */
  int device_id;
} xrt__dl_device;

typedef struct xrt__dl_dtype {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} xrt__dl_dtype;

typedef struct xrt__dl_tensor {
  void *data;
  xrt__dl_device device;
  int ndim;
  xrt__dl_dtype dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL: dense row-major */
  uint64_t byte_offset;
} xrt__dl_tensor;

struct DLManagedTensor {
  xrt__dl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
};
