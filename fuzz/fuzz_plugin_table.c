/* libFuzzer target: plugin table validation and the core's defences
 * against a misbehaving plugin.  The input bytes pick every field of an
 * xrt_plugin_api from a fixed menu: struct_size, ABI versions, name and
 * version strings, and for each function pointer a working one (which
 * forwards to the simulator), NULL, or one that misbehaves in a way a
 * core must survive (reports success without producing its result,
 * returns an out-of-range status or count, leaves its error message
 * unterminated...).  The table is registered in a fresh context; when
 * that succeeds, a client is created and does a buffer round trip, a
 * compile and an execution.  Error statuses are fine; crashes, leaks and
 * UBSan reports are findings.  Misbehaviours that no core can survive
 * (bogus pointers, a destroy that does not free) are not on the menu. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xrt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes of the input, consumed one choice at a time (0 once spent:
 * the first menu entry, the working one). */
typedef struct fuzz_bytes {
  const uint8_t *p;
  size_t n;
} fuzz_bytes;

static unsigned fuzz_pick(fuzz_bytes *b, unsigned choices) {
  if (b->n == 0) return 0;
  b->n--;
  return *b->p++ % choices;
}

static const xrt_plugin_api *sim(void) { return xrt_sim_plugin_api(); }

/* The misbehaviour the current input chose for each kind of call. */
static unsigned fuzz_mode_status, fuzz_mode_count;

/* XRT_FUZZ_SKIP_KNOWN=1 avoids the known findings (see fuzz/README.md)
 * to explore past them until they are fixed. */
static int fuzz_skip_known(void) { return getenv("XRT_FUZZ_SKIP_KNOWN") != NULL; }

static void fuzz_bad_message(xrt_plugin_error *err) {
  if (!err) return;
  memset(err->message, 'x', sizeof err->message); /* no NUL */
  if (fuzz_skip_known()) err->message[sizeof err->message - 1] = 0;
}

/* A failure status chosen by the input: in range, or not an xrt_status. */
static xrt_status fuzz_failure(xrt_plugin_error *err) {
  fuzz_bad_message(err);
  return fuzz_mode_status ? (xrt_status)(1000 + fuzz_mode_status)
                          : XRT_INTERNAL;
}

/* Forwarding calls check the device index: a table that misreports its
 * device count must not make the simulator itself index out of range. */
static int fuzz_device_ok(void *client, int device) {
  return device >= 0 && device < sim()->device_count(client);
}

/* ---- working entries: forward to the simulator ---- */

static xrt_status ok_client_create(const xrt_plugin_client_args *a, void **c,
                                   xrt_plugin_error *e) {
  return sim()->client_create(a, c, e);
}
static void ok_client_destroy(void *c) { sim()->client_destroy(c); }
static int ok_device_count(void *c) { return sim()->device_count(c); }
static xrt_status ok_device_describe(void *c, int d, xrt_plugin_device_desc *o,
                                     xrt_plugin_error *e) {
  if (!fuzz_device_ok(c, d)) return fuzz_failure(e);
  return sim()->device_describe(c, d, o, e);
}
static xrt_status ok_buffer_alloc(void *c, int d, size_t n, void **m,
                                  xrt_plugin_error *e) {
  if (!fuzz_device_ok(c, d)) return fuzz_failure(e);
  return sim()->buffer_alloc(c, d, n, m, e);
}
static void ok_buffer_free(void *c, int d, void *m) {
  if (fuzz_device_ok(c, d)) sim()->buffer_free(c, d, m);
}
static xrt_status ok_buffer_write(void *c, int d, void *m, const void *s,
                                  size_t n, xrt_plugin_error *e) {
  if (!fuzz_device_ok(c, d)) return fuzz_failure(e);
  return sim()->buffer_write(c, d, m, s, n, e);
}
static xrt_status ok_buffer_read(void *c, int d, const void *m, void *dst,
                                 size_t n, xrt_plugin_error *e) {
  if (!fuzz_device_ok(c, d)) return fuzz_failure(e);
  return sim()->buffer_read(c, d, m, dst, n, e);
}
static xrt_status ok_buffer_copy(void *c, int sd, const void *s, int dd,
                                 void *dst, size_t n, xrt_plugin_error *e) {
  if (!fuzz_device_ok(c, sd) || !fuzz_device_ok(c, dd)) return fuzz_failure(e);
  return sim()->buffer_copy(c, sd, s, dd, dst, n, e);
}
static xrt_status ok_compile(void *c, const xrt_plugin_compile_args *a,
                             void **x, xrt_plugin_error *e) {
  return sim()->compile(c, a, x, e);
}
static void ok_executable_destroy(void *x) { sim()->executable_destroy(x); }
static xrt_status ok_execute(void *c, const xrt_plugin_execute_args *a,
                             xrt_plugin_error *e) {
  if (!fuzz_device_ok(c, a->device)) return fuzz_failure(e);
  return sim()->execute(c, a, e);
}
static xrt_status ok_platform_describe(xrt_plugin_platform_desc *o,
                                       xrt_plugin_error *e) {
  if (!sim()->platform_describe) return XRT_UNIMPLEMENTED;
  return sim()->platform_describe(o, e);
}
static int ok_op_support(void *c, const xrt_ir_module *m, int32_t f,
                         const xrt_ir_op *op, xrt_plugin_error *why) {
  if (!sim()->op_support) return XRT_SUPPORT_MAYBE;
  return sim()->op_support(c, m, f, op, why);
}

/* ---- misbehaving entries ---- */

static xrt_status bad_client_create(const xrt_plugin_client_args *a, void **c,
                                    xrt_plugin_error *e) {
  (void)a;
  if (fuzz_mode_status & 1) { *c = NULL; return XRT_OK; } /* no client */
  return fuzz_failure(e);
}
static int bad_device_count(void *c) {
  (void)c;
  static const int counts[] = {0, -1, 2000, INT32_MIN};
  return counts[fuzz_mode_count % 4];
}
static xrt_status bad_device_describe(void *c, int d, xrt_plugin_device_desc *o,
                                      xrt_plugin_error *e) {
  (void)c; (void)d;
  if (fuzz_mode_status & 1) { /* success, with nothing usable in it */
    o->kind = NULL;
    o->num_attributes = fuzz_mode_count ? -3 : 5;
    o->attributes = NULL;
    return XRT_OK;
  }
  return fuzz_failure(e);
}
static xrt_status bad_buffer_alloc(void *c, int d, size_t n, void **m,
                                   xrt_plugin_error *e) {
  (void)c; (void)d; (void)n;
  if (fuzz_mode_status & 1) { *m = NULL; return XRT_OK; }
  return fuzz_failure(e);
}
static xrt_status bad_buffer_write(void *c, int d, void *m, const void *s,
                                   size_t n, xrt_plugin_error *e) {
  (void)c; (void)d; (void)m; (void)s; (void)n;
  return fuzz_failure(e);
}
static xrt_status bad_buffer_read(void *c, int d, const void *m, void *dst,
                                  size_t n, xrt_plugin_error *e) {
  (void)c; (void)d; (void)m; (void)dst; (void)n;
  return fuzz_failure(e);
}
static xrt_status bad_buffer_copy(void *c, int sd, const void *s, int dd,
                                  void *dst, size_t n, xrt_plugin_error *e) {
  (void)c; (void)sd; (void)s; (void)dd; (void)dst; (void)n;
  return fuzz_failure(e);
}
static xrt_status bad_compile(void *c, const xrt_plugin_compile_args *a,
                              void **x, xrt_plugin_error *e) {
  (void)c; (void)a;
  if (fuzz_mode_status & 1) { *x = NULL; return XRT_OK; } /* no executable */
  return fuzz_failure(e);
}
static xrt_status bad_execute(void *c, const xrt_plugin_execute_args *a,
                              xrt_plugin_error *e) {
  (void)c; (void)a;
  if (fuzz_mode_status & 1) return XRT_OK; /* outputs never written */
  return fuzz_failure(e);
}
static xrt_status bad_inject_fault(void *c, int d, int64_t s,
                                   xrt_plugin_error *e) {
  (void)c; (void)d; (void)s;
  return fuzz_failure(e);
}
static xrt_status bad_platform_describe(xrt_plugin_platform_desc *o,
                                        xrt_plugin_error *e) {
  if (fuzz_mode_status & 1) {
    static const char *const versions[] = {"garbage", "", "9.9.9", "0.0.0"};
    o->stablehlo_min = versions[fuzz_mode_count % 4];
    o->stablehlo_max = versions[(fuzz_mode_count / 4) % 4];
    o->capabilities = 0xffffffffu;
    o->dtypes = fuzz_mode_count & 1 ? 1 : ~(uint64_t)0;
    o->num_attributes = fuzz_mode_count & 2 ? -1 : 4;
    o->attributes = NULL;
    return XRT_OK;
  }
  return fuzz_failure(e);
}
static int bad_op_support(void *c, const xrt_ir_module *m, int32_t f,
                          const xrt_ir_op *op, xrt_plugin_error *why) {
  (void)c; (void)m; (void)f; (void)op;
  fuzz_bad_message(why);
  return fuzz_mode_count & 1 ? 42 : -7; /* not an xrt_support */
}
static xrt_status bad_inject_fault_kind(void *c, int d, int k, int64_t a,
                                        xrt_plugin_error *e) {
  (void)c; (void)d; (void)k; (void)a;
  return fuzz_failure(e);
}
static void *null_host_pointer(void *c, int d, void *m) {
  (void)c; (void)d; (void)m;
  return NULL; /* not host-addressable: always allowed */
}
static xrt_status bad_wrap_host(void *c, int d, void *h, size_t n, void **m,
                                xrt_plugin_error *e) {
  (void)c; (void)d; (void)h; (void)n; (void)m;
  return fuzz_failure(e);
}
static xrt_status bad_copy_region(void *c, const xrt_plugin_copy_region_args *a,
                                  xrt_plugin_error *e) {
  (void)c; (void)a;
  return fuzz_failure(e);
}

/* Picks one of {working, NULL, misbehaving} (an optional entry's working
 * choice is NULL too). */
#define FUZZ_SLOT(b, field, ok, bad)                                         \
  do {                                                                       \
    unsigned k_ = fuzz_pick(b, 3);                                           \
    api->field = k_ == 0 ? (ok) : k_ == 1 ? NULL : (bad);                   \
  } while (0)

/* Whether a destroy/free slot is NULL (never under
 * XRT_FUZZ_SKIP_KNOWN; the byte is consumed either way). */
static unsigned fuzz_slot2(fuzz_bytes *b) {
  unsigned k = fuzz_pick(b, 2);
  return fuzz_skip_known() ? 0 : k;
}

/* The table, inside room to spare: a struct_size larger than the struct
 * lets the core read nothing beyond what it knows, but must not make it
 * read outside our memory either. */
static union {
  xrt_plugin_api api;
  unsigned char room[sizeof(xrt_plugin_api) + 256];
} fuzz_table;

static char fuzz_long_name[300];

static void fuzz_fill_header(fuzz_bytes *b, xrt_plugin_api *api) {
  const size_t full = sizeof(xrt_plugin_api);
  const size_t sizes[] = {full, offsetof(xrt_plugin_api, platform_describe),
                          offsetof(xrt_plugin_api, inject_fault), 0,
                          sizeof(size_t), full + 64, full - 1, 3};
  api->struct_size = sizes[fuzz_pick(b, 8)];
  const uint32_t majors[] = {XRT_PLUGIN_ABI_MAJOR, 0, XRT_PLUGIN_ABI_MAJOR + 1,
                             UINT32_MAX};
  api->abi_major = majors[fuzz_pick(b, 4)];
  const uint32_t minors[] = {XRT_PLUGIN_ABI_MINOR, XRT_PLUGIN_ABI_MINOR + 1,
                             UINT32_MAX};
  api->abi_minor = minors[fuzz_pick(b, 3)];
  memset(fuzz_long_name, 'n', sizeof fuzz_long_name - 1);
  const char *names[] = {"fz", NULL, "", fuzz_long_name, "sim", "a b/c"};
  api->name = names[fuzz_pick(b, 6)];
  const char *versions[] = {"1.0", NULL, ""};
  api->version = versions[fuzz_pick(b, 3)];
}

static void fuzz_fill_table(fuzz_bytes *b, xrt_plugin_api *api) {
  memset(&fuzz_table, 0, sizeof fuzz_table);
  fuzz_fill_header(b, api);
  fuzz_mode_status = fuzz_pick(b, 4);
  fuzz_mode_count = fuzz_pick(b, 16);
  FUZZ_SLOT(b, client_create, ok_client_create, bad_client_create);
  /* A destroy or free that does nothing would leak in the plugin itself:
   * working or NULL only (XRT_FUZZ_SKIP_KNOWN=1: working, past the known
   * finding fuzz/regressions/fuzz_plugin_table-null-client-destroy-leak). */
  api->client_destroy = fuzz_slot2(b) ? NULL : ok_client_destroy;
  FUZZ_SLOT(b, device_count, ok_device_count, bad_device_count);
  FUZZ_SLOT(b, device_describe, ok_device_describe, bad_device_describe);
  FUZZ_SLOT(b, buffer_alloc, ok_buffer_alloc, bad_buffer_alloc);
  api->buffer_free = fuzz_slot2(b) ? NULL : ok_buffer_free;
  FUZZ_SLOT(b, buffer_write, ok_buffer_write, bad_buffer_write);
  FUZZ_SLOT(b, buffer_read, ok_buffer_read, bad_buffer_read);
  FUZZ_SLOT(b, buffer_copy, ok_buffer_copy, bad_buffer_copy);
  FUZZ_SLOT(b, compile, ok_compile, bad_compile);
  api->executable_destroy = fuzz_slot2(b) ? NULL : ok_executable_destroy;
  FUZZ_SLOT(b, execute, ok_execute, bad_execute);
  FUZZ_SLOT(b, inject_fault, NULL, bad_inject_fault);
  FUZZ_SLOT(b, platform_describe, ok_platform_describe, bad_platform_describe);
  FUZZ_SLOT(b, op_support, ok_op_support, bad_op_support);
  FUZZ_SLOT(b, inject_fault_kind, NULL, bad_inject_fault_kind);
  FUZZ_SLOT(b, buffer_host_pointer, NULL, null_host_pointer);
  FUZZ_SLOT(b, buffer_wrap_host, NULL, bad_wrap_host);
  FUZZ_SLOT(b, buffer_copy_region, NULL, bad_copy_region);
}

static const char fuzz_program[] =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* What a client does first: a round trip, a compile and an execution. */
static void fuzz_use_client(xrt_client *client) {
  xrt_device *dev = xrt_client_device(client, 0);
  xrt_shape s = {XRT_F32, 1, {4}};
  const float in[4] = {1, 2, 3, 4};
  float back[4];
  xrt_buffer *buf = NULL;
  if (xrt_buffer_from_host(client, dev, &s, in, &buf) == XRT_OK)
    xrt_buffer_to_host(buf, back, sizeof back);
  xrt_executable *exe = NULL;
  if (xrt_compile(client, fuzz_program, sizeof fuzz_program - 1, NULL, &exe) ==
      XRT_OK) {
    xrt_buffer *out = NULL;
    if (buf && xrt_execute(exe, dev, &buf, 1, &out, 1, NULL) == XRT_OK) {
      xrt_buffer_to_host(out, back, sizeof back);
      xrt_buffer_release(out);
    }
    xrt_executable_release(exe);
  }
  xrt_buffer_release(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_bytes b = {data, size};
  xrt_plugin_api *api = &fuzz_table.api;
  unsigned reg_name = fuzz_pick(&b, 2);
  fuzz_fill_table(&b, api);

  xrt_context_options co;
  xrt_context_options_init(&co);
  co.builtin_plugins = false;
  co.env_plugins = false;
  xrt_context *ctx = NULL;
  if (xrt_context_create(&co, &ctx) != XRT_OK) abort();
  xrt_plugin *plugin = NULL;
  const char *name = reg_name ? "fuzzed" : NULL;
  if (xrt_context_register_plugin(ctx, name, api, &plugin) == XRT_OK) {
    xrt_client_options o;
    xrt_client_options_init(&o);
    o.context = ctx;
    o.plugin = name ? name : api->name;
    o.num_devices = 1;
    o.threads_per_device = 1;
    o.device_memory_bytes = 1u << 20;
    xrt_client *client = NULL;
    if (xrt_client_create(&o, &client) == XRT_OK) {
      fuzz_use_client(client);
      xrt_client_release(client);
    }
  }
  if (xrt_context_release(ctx) != XRT_OK) abort(); /* no client is left */
  return 0;
}
