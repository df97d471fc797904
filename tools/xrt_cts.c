/*
 * xrt_cts.c - the conformance test suite for xrt device plugins.
 *
 *   xrt-cts PLUGIN.so [--filter SUBSTR] [--devices N]
 *
 * Loads PLUGIN.so into a fresh context (no built-in or XRT_PLUGINS
 * plugins) and runs every test whose name contains SUBSTR, printing one
 * line per test:
 *
 *   PASS name
 *   FAIL name: reason
 *   SKIP name: why (a capability or element type the plugin does not
 *              advertise, or a program its query_support refuses)
 *
 * then "xrt-cts: N passed, M failed, K skipped".  Exit status 0 iff no test
 * failed (2 for a usage error).  Tests use only the public API (xrt.h), so
 * they check the core's handling of the plugin as well as the plugin.
 * Nothing runs in a child process: a crash of the plugin is a crash of the
 * suite, never a masked failure.
 *
 * Contents
 *   1. The harness: tests, results, checks
 *   2. Element types: names, host patterns, conversions
 *   3. Clients and programs: open, compile with query_support, run
 *   4. basic.*       load, info, client, devices, topology, exclusivity
 *   5. buffers.*     round trips per element type, copies, async, misuse
 *   6. compile.*     errors with locations, query_support, versions
 *   7. execute.*     known results, async, events, misuse
 *   8. multi.* and collectives.*
 *   9. faults.*
 *  10. numerics.*    programs with independently computed results
 *  11. main
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xrt.h"

/* ======================================================================
 * 1. The harness
 * ==================================================================== */

typedef enum cts_result { CTS_PASS = 0, CTS_FAIL = 1, CTS_SKIP = 2 } cts_result;

typedef struct cts cts;
/* A test body; c is a fresh client the harness made and releases (with
 * everything on it) after the test, NULL for tests that make their own. */
typedef cts_result (*cts_fn)(cts *t, xrt_client *c, const void *arg);

/* What a test needs before it runs: capabilities and element types the
 * plugin must advertise (else SKIP, checked in this order), and whether
 * the harness makes its client. */
typedef struct cts_needs {
  uint32_t caps;
  xrt_dtype dt[2];  /* XRT_DTYPE_INVALID: none */
  bool own_clients; /* the test makes its own clients */
} cts_needs;

typedef struct cts_test {
  char name[80];
  cts_fn fn;
  const void *arg;
  cts_needs needs;
} cts_test;

/* A test registered under a fixed name. */
typedef struct cts_case {
  const char *name;
  cts_fn fn;
  const void *arg;
  cts_needs needs;
} cts_case;

struct cts {
  const char *path;       /* the plugin library */
  xrt_context *ctx;
  xrt_plugin *plugin;
  xrt_plugin_info info;
  int want_devices;       /* --devices: asked of MULTI_DEVICE plugins */
  xrt_dtype dt;           /* element type of generic tests (f32 if it can) */
  char prefix[96];        /* wraps programs when the plugin's StableHLO */
  char why[2048];         /* the current test's FAIL/SKIP reason */
  cts_test *tests;
  int ntests, cap;
};

#define CTS_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

#if defined(__GNUC__)
#define CTS_PRINTF(a, b) XRT_PRINTF_FORMAT(a, b)
#else
#define CTS_PRINTF(a, b)
#endif

/* Records a reason and returns the result it explains. */
static cts_result CTS_PRINTF(3, 4) cts_reason(cts *t, cts_result r,
                                              const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->why, sizeof t->why, fmt, ap);
  va_end(ap);
  return r;
}

#define cts_fail(t, ...) cts_reason((t), CTS_FAIL, __VA_ARGS__)
#define cts_skip(t, ...) cts_reason((t), CTS_SKIP, __VA_ARGS__)

/* A failed call: its text, the code and xrt's message (read at once). */
static cts_result cts_fail_status(cts *t, const char *call, xrt_status s) {
  return cts_fail(t, "%s: %s: %s", call, xrt_strerror(s), xrt_last_error());
}

/* Checks for test bodies; each needs `cts_result r` and a `done:` label
 * that releases what the test made. */
#define CTS_TRY(call)                                                         \
  do {                                                                        \
    xrt_status s_ = (call);                                                   \
    if (s_ != XRT_OK) {                                                       \
      r = cts_fail_status(t, #call, s_);                                      \
      goto done;                                                              \
    }                                                                         \
  } while (0)

#define CTS_CHECK(cond, ...)                                                  \
  do {                                                                        \
    if (!(cond)) {                                                            \
      r = cts_fail(t, __VA_ARGS__);                                           \
      goto done;                                                              \
    }                                                                         \
  } while (0)

/* The call must return want (with a non-empty message when it fails). */
#define CTS_EXPECT_CODE(call, want)                                           \
  CTS_PROPAGATE(cts_expect_code(t, #call, (call), (want)))

/* FAILs naming the call unless it returned want, with a message if it
 * failed (read at once). */
static cts_result cts_expect_code(cts *t, const char *call, xrt_status got,
                                  xrt_status want) {
  if (got != want)
    return cts_fail(t, "%s returned %s, want %s%s%s", call,
                    xrt_strerror(got), xrt_strerror(want), got ? ": " : "",
                    got ? xrt_last_error() : "");
  if (got != XRT_OK && !*xrt_last_error())
    return cts_fail(t, "%s failed with an empty message", call);
  return CTS_PASS;
}

/* Stops the test with a result already recorded (SKIP or FAIL). */
#define CTS_PROPAGATE(expr)                                                   \
  do {                                                                        \
    cts_result q_ = (expr);                                                   \
    if (q_ != CTS_PASS) {                                                     \
      r = q_;                                                                 \
      goto done;                                                              \
    }                                                                         \
  } while (0)

static void cts_add(cts *t, const char *name, cts_fn fn, const void *arg,
                    cts_needs needs) {
  if (t->ntests == t->cap) {
    int cap = t->cap ? 2 * t->cap : 64;
    cts_test *n = realloc(t->tests, sizeof *n * (size_t)cap);
    if (!n) {
      fprintf(stderr, "xrt-cts: out of memory\n");
      exit(2);
    }
    t->tests = n, t->cap = cap;
  }
  cts_test *e = &t->tests[t->ntests++];
  snprintf(e->name, sizeof e->name, "%s", name);
  e->fn = fn;
  e->arg = arg;
  e->needs = needs;
}

static void cts_add_cases(cts *t, const cts_case *cases, int n) {
  for (int i = 0; i < n; i++)
    cts_add(t, cases[i].name, cases[i].fn, cases[i].arg, cases[i].needs);
}

static bool cts_has_cap(const cts *t, uint32_t cap) {
  return (t->info.capabilities & cap) != 0;
}

static const char *cts_cap_name(uint32_t cap) {
  switch (cap) {
  case XRT_CAP_ASYNC: return "ASYNC";
  case XRT_CAP_MULTI_DEVICE: return "MULTI_DEVICE";
  case XRT_CAP_COLLECTIVES: return "COLLECTIVES";
  case XRT_CAP_EXCLUSIVE: return "EXCLUSIVE";
  case XRT_CAP_FAULT_INJECTION: return "FAULT_INJECTION";
  case XRT_CAP_HOST_MEMORY: return "HOST_MEMORY";
  default: return "?";
  }
}

/* SKIP unless the plugin advertises every capability of caps (the lowest
 * missing one is named). */
static cts_result cts_need_caps(cts *t, uint32_t caps) {
  for (uint32_t cap = 1; cap && cap <= caps; cap <<= 1)
    if ((caps & cap) && !cts_has_cap(t, cap))
      return cts_skip(t, "capability %s (not advertised)", cts_cap_name(cap));
  return CTS_PASS;
}

/* ======================================================================
 * 2. Element types
 * ==================================================================== */

/* Short names used in test names (xrt_dtype_name gives MLIR spellings). */
static const char *const cts_dtype_names[XRT_DTYPE_COUNT] = {
    "invalid", "pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
    "f16", "bf16", "f32", "f64", "c64", "c128", "s2", "s4", "u2", "u4",
    "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz",
    "f8e3m4", "f8e4m3", "f8e8m0fnu", "f6e2m3fn", "f6e3m2fn", "f4e2m1fn"};

static bool cts_has_dtype(const cts *t, xrt_dtype d) {
  return t->info.dtypes == 0 || ((t->info.dtypes >> (unsigned)d) & 1u);
}

/* SKIP unless the plugin advertises element type d. */
static cts_result cts_need_dtype(cts *t, xrt_dtype d) {
  if (cts_has_dtype(t, d)) return CTS_PASS;
  return cts_skip(t, "element type %s (not advertised)", cts_dtype_names[d]);
}

static xrt_shape cts_shape(xrt_dtype d, int rank, const int64_t *dims) {
  xrt_shape s = {.dtype = d, .rank = rank};
  if (rank > 0) memcpy(s.dims, dims, sizeof *dims * (size_t)rank);
  return s;
}

static const char *cts_shape_str(const xrt_shape *s, char *buf, size_t cap) {
  xrt_shape_format(s, buf, cap);
  return buf;
}

/* Shapes are equal when xrt spells them alike ("tensor<2x3xf32>"), which
 * holds element type, rank and every dimension. */
static bool cts_shape_eq(const xrt_shape *a, const xrt_shape *b) {
  char sa[512], sb[512]; /* as long as xrt_shape_format's own */
  return strcmp(cts_shape_str(a, sa, sizeof sa),
                cts_shape_str(b, sb, sizeof sb)) == 0;
}

/* Fills n elements of type d with valid, varied storage patterns (pred 0/1,
 * sub-byte integers sign- or zero-extended, small floats in their low bits;
 * every other type takes arbitrary bytes, which a transfer must keep). */
static void cts_fill_pattern(xrt_dtype d, void *p, int64_t n, unsigned seed) {
  uint8_t *b = p;
  size_t es = xrt_dtype_size(d);
  for (int64_t i = 0; i < n; i++) {
    unsigned v = (unsigned)(i * 37 + seed * 11 + 5);
    switch (d) {
    case XRT_PRED: b[i] = (uint8_t)((v >> 1) & 1u); break;
    case XRT_S2: b[i] = (uint8_t)(int8_t)((int)(v % 4u) - 2); break;
    case XRT_S4: b[i] = (uint8_t)(int8_t)((int)(v % 16u) - 8); break;
    case XRT_U2: b[i] = (uint8_t)(v % 4u); break;
    case XRT_U4: b[i] = (uint8_t)(v % 16u); break;
    case XRT_F6E2M3FN: case XRT_F6E3M2FN: b[i] = (uint8_t)(v & 0x3fu); break;
    case XRT_F4E2M1FN: b[i] = (uint8_t)(v & 0x0fu); break;
    default:
      for (size_t k = 0; k < es; k++)
        b[(size_t)i * es + k] = (uint8_t)(v * 131u + (unsigned)k * 29u + seed);
    }
  }
}

/* Host conversions for the element types the execution tests use. */
static void cts_put(xrt_dtype d, void *p, int64_t i, double v) {
  switch (d) {
  case XRT_F32: ((float *)p)[i] = (float)v; break;
  case XRT_F64: ((double *)p)[i] = v; break;
  case XRT_S32: ((int32_t *)p)[i] = (int32_t)v; break;
  case XRT_S64: ((int64_t *)p)[i] = (int64_t)v; break;
  case XRT_PRED: ((uint8_t *)p)[i] = v != 0; break;
  default: break;
  }
}

static double cts_get(xrt_dtype d, const void *p, int64_t i) {
  switch (d) {
  case XRT_F32: return ((const float *)p)[i];
  case XRT_F64: return ((const double *)p)[i];
  case XRT_S32: return ((const int32_t *)p)[i];
  case XRT_S64: return (double)((const int64_t *)p)[i];
  case XRT_PRED: return ((const uint8_t *)p)[i];
  default: return NAN;
  }
}

/* The value ref would have once stored as type d (what an exact result
 * is). */
static double cts_round(xrt_dtype d, double v) {
  switch (d) {
  case XRT_F32: return (double)(float)v;
  case XRT_S32: return v >= INT32_MIN && v <= INT32_MAX ? trunc(v) : v;
  default: return v;
  }
}

/* Whether got matches want: integers exactly, floats within atol + rtol *
 * |want| (rtol < 0: exactly the value rounded to d); NaN matches NaN. */
static bool cts_close(xrt_dtype d, double got, double want, double rtol,
                      double atol) {
  if (isnan(want)) return isnan(got);
  if (!xrt_dtype_is_float(d) || rtol < 0) return got == cts_round(d, want);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= atol + rtol * fabs(want);
}

/* ======================================================================
 * 3. Clients and programs
 * ==================================================================== */

/* Devices to ask for: --devices for multi-device plugins, else 1. */
static int cts_devices_to_ask(const cts *t) {
  return cts_has_cap(t, XRT_CAP_MULTI_DEVICE) ? t->want_devices : 1;
}

/* Options for a client of the plugin under test with num_devices. */
static void cts_client_options(const cts *t, int num_devices,
                               xrt_client_options *o) {
  xrt_client_options_init(o);
  o->context = t->ctx;
  o->plugin = t->info.name;
  o->num_devices = num_devices;
  o->device_memory_bytes = 256ull << 20;
}

static xrt_status cts_open(cts *t, int num_devices, xrt_client **out) {
  xrt_client_options o;
  cts_client_options(t, num_devices, &o);
  return xrt_client_create(&o, out);
}

/* A client for a test (FAIL with the reason when it cannot be made). */
static cts_result cts_client(cts *t, xrt_client **out) {
  *out = NULL;
  xrt_status s = cts_open(t, cts_devices_to_ask(t), out);
  if (s) return cts_fail_status(t, "xrt_client_create", s);
  return CTS_PASS;
}

/* The program text as the plugin will accept it: wrapped in a module that
 * states a StableHLO version in its range when xrt's own is outside it
 * (on line 1, so that the program's other lines keep their numbers). */
static char *cts_source(const cts *t, const char *src) {
  size_t n = strlen(t->prefix) + strlen(src) + 4;
  char *text = malloc(n);
  if (!text) return NULL;
  snprintf(text, n, "%s%s%s", t->prefix, src, t->prefix[0] ? "}\n" : "");
  return text;
}

static xrt_status cts_parse(const cts *t, const char *file, const char *src,
                            xrt_program **out) {
  char *text = cts_source(t, src);
  if (!text) return XRT_RESOURCE_EXHAUSTED;
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = file;
  xrt_status s = xrt_program_parse(text, strlen(text), &o, out);
  free(text);
  return s;
}

/* The first issue of the report's verdict, as "op at file:line:col:
 * reason". */
static void cts_describe_issue(const xrt_support_report *rep, char *buf,
                               size_t cap) {
  xrt_support v = xrt_support_report_verdict(rep);
  snprintf(buf, cap, "no issue listed");
  for (int i = 0; i < xrt_support_report_count(rep); i++) {
    const xrt_support_issue *is = xrt_support_report_issue(rep, i);
    if (!is || is->verdict != v) continue;
    snprintf(buf, cap, "%s at %s:%d:%d: %s", is->op ? is->op : "?",
             is->file ? is->file : "?", (int)is->line, (int)is->col,
             is->reason ? is->reason : "");
    return;
  }
}

/* Checks a report's own consistency: the verdict is the worst issue's,
 * every issue names its op, says why and (but the version's) where. */
static cts_result cts_check_report(cts *t, const xrt_support_report *rep) {
  xrt_support v = xrt_support_report_verdict(rep);
  int n = xrt_support_report_count(rep);
  xrt_support worst = XRT_SUPPORT_YES;
  if (n < 0) return cts_fail(t, "query_support: %d issues", n);
  for (int i = 0; i < n; i++) {
    const xrt_support_issue *is = xrt_support_report_issue(rep, i);
    if (!is) return cts_fail(t, "query_support: issue %d of %d is NULL", i, n);
    if (!is->op || !*is->op || !is->reason)
      return cts_fail(t, "query_support: issue %d has no op or reason", i);
    if (strcmp(is->op, "module") != 0 &&
        (!is->file || is->line < 1 || is->col < 1))
      return cts_fail(t, "query_support: issue %d (%s) has no location", i,
                      is->op);
    if (is->verdict != XRT_SUPPORT_NO && is->verdict != XRT_SUPPORT_MAYBE)
      return cts_fail(t, "query_support: issue %d (%s) has verdict %d", i,
                      is->op, (int)is->verdict);
    if (is->verdict > worst) worst = is->verdict;
  }
  if (v != worst)
    return cts_fail(t, "query_support: verdict %d but the worst of its %d "
                    "issues is %d", (int)v, n, (int)worst);
  return CTS_PASS;
}

static const char *cts_support_name(xrt_support v) {
  return v == XRT_SUPPORT_YES ? "YES" : v == XRT_SUPPORT_NO ? "NO" : "MAYBE";
}

/* Parses, asks query_support and compiles, holding the plugin to its
 * answer: YES must compile, NO must not (the test is then SKIPped, by the
 * plugin's own reason), MAYBE may go either way (a failed compile is a
 * SKIP).  *out_verdict (may be NULL) receives the verdict. */
static cts_result cts_compile(cts *t, xrt_client *c, const char *file,
                              const char *src, const xrt_compile_options *opt,
                              xrt_executable **out, xrt_support *out_verdict) {
  xrt_program *prog = NULL;
  xrt_support_report *rep = NULL;
  char issue[1024];
  *out = NULL;
  xrt_status s = cts_parse(t, file, src, &prog);
  if (s) return cts_fail_status(t, "xrt_program_parse", s);
  s = xrt_client_query_support(c, prog, opt, &rep);
  if (s) {
    xrt_program_release(prog);
    return cts_fail_status(t, "xrt_client_query_support", s);
  }
  cts_result r = cts_check_report(t, rep);
  xrt_support v = xrt_support_report_verdict(rep);
  cts_describe_issue(rep, issue, sizeof issue);
  xrt_support_report_release(rep);
  if (out_verdict) *out_verdict = v;
  if (r != CTS_PASS) {
    xrt_program_release(prog);
    return r;
  }
  s = xrt_compile_program(c, prog, opt, out);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s: %s", xrt_strerror(s), xrt_last_error());
  xrt_program_release(prog);
  if (v == XRT_SUPPORT_NO) {
    if (s == XRT_OK)
      return cts_fail(t, "query_support said NO (%s) but the program "
                      "compiled", issue);
    return cts_skip(t, "query_support: NO: %s", issue);
  }
  if (s == XRT_OK) return CTS_PASS;
  if (v == XRT_SUPPORT_MAYBE)
    return cts_skip(t, "query_support: MAYBE (%s), then "
                    "xrt_compile_program: %s", issue, msg);
  return cts_fail(t, "query_support said YES but xrt_compile_program "
                  "failed: %s", msg);
}

/* Uploads n host arrays to device dev. */
static cts_result cts_upload(cts *t, xrt_client *c, xrt_device *dev, int n,
                             const xrt_shape *shapes, void *const *data,
                             xrt_buffer **bufs) {
  for (int i = 0; i < n; i++) {
    xrt_status s = xrt_buffer_from_host(c, dev, &shapes[i], data[i], &bufs[i]);
    if (s) return cts_fail_status(t, "xrt_buffer_from_host", s);
  }
  return CTS_PASS;
}

/* Reads a buffer back, checking its shape first. */
static cts_result cts_download(cts *t, xrt_buffer *b, const xrt_shape *want,
                               void *dst) {
  xrt_shape got;
  char g[128], w[128];
  xrt_status s = xrt_buffer_shape(b, &got);
  if (s) return cts_fail_status(t, "xrt_buffer_shape", s);
  if (!cts_shape_eq(&got, want))
    return cts_fail(t, "result has shape %s, want %s",
                    cts_shape_str(&got, g, sizeof g),
                    cts_shape_str(want, w, sizeof w));
  s = xrt_buffer_to_host(b, dst, xrt_shape_bytes(want));
  if (s) return cts_fail_status(t, "xrt_buffer_to_host", s);
  return CTS_PASS;
}

/* Compares n elements of type d against doubles (what = "result[3]"). */
static cts_result cts_compare(cts *t, const char *what, xrt_dtype d,
                              const void *got, const double *want, int64_t n,
                              double rtol, double atol) {
  for (int64_t i = 0; i < n; i++) {
    double g = cts_get(d, got, i);
    if (!cts_close(d, g, want[i], rtol, atol))
      return cts_fail(t, "%s[%lld] = %.9g, want %.9g", what, (long long)i, g,
                      cts_round(d, want[i]));
  }
  return CTS_PASS;
}

/* A program (file and src, for cts_run_program) run on device 0 of a
 * client: inputs from host arrays, one output compared against want (the
 * element types are the test's needs). */
typedef struct cts_run {
  const char *file, *src;
  int nin;
  const xrt_shape *in;
  void *const *in_data;
  xrt_shape out;
  const double *want;
  double rtol, atol;
} cts_run;

/* Runs exe (compiled from run's program) once as run says, releasing the
 * buffers it made. */
static cts_result cts_execute_check(cts *t, xrt_client *c,
                                    xrt_executable *exe, const cts_run *run) {
  cts_result r = CTS_PASS;
  xrt_buffer *args[8] = {NULL}, *out = NULL;
  void *host = NULL;
  xrt_device *dev = xrt_client_device(c, 0);
  CTS_PROPAGATE(cts_upload(t, c, dev, run->nin, run->in, run->in_data, args));
  CTS_TRY(xrt_execute(exe, dev, args, run->nin, &out, 1, NULL));
  host = calloc(1, xrt_shape_bytes(&run->out) + 1);
  CTS_CHECK(host, "out of host memory");
  CTS_PROPAGATE(cts_download(t, out, &run->out, host));
  r = cts_compare(t, "result", run->out.dtype, host, run->want,
                  xrt_shape_numel(&run->out), run->rtol, run->atol);
done:
  for (int i = 0; i < run->nin; i++) xrt_buffer_release(args[i]);
  xrt_buffer_release(out);
  free(host);
  return r;
}

/* Compiles run's program and runs it once (the client releases the
 * executable). */
static cts_result cts_run_program(cts *t, xrt_client *c,
                                  const cts_run *run) {
  xrt_executable *exe = NULL;
  cts_result r = cts_compile(t, c, run->file, run->src, NULL, &exe, NULL);
  return r == CTS_PASS ? cts_execute_check(t, c, exe, run) : r;
}

/* ======================================================================
 * 4. basic.*
 * ==================================================================== */

/* Parses "X.Y.Z" into one comparable number; false if malformed. */
static bool cts_parse_version(const char *s, long *out) {
  long part[3];
  const char *p = s;
  if (!s) return false;
  for (int i = 0; i < 3; i++) {
    char *end;
    if (*p < '0' || *p > '9') return false;
    part[i] = strtol(p, &end, 10);
    if (part[i] > 9999) return false;
    p = end;
    if (i < 2 && *p++ != '.') return false;
  }
  if (*p) return false;
  *out = (part[0] * 10000 + part[1]) * 10000 + part[2];
  return true;
}

static cts_result cts_check_attribute(cts *t, const char *where,
                                      const xrt_attribute *a) {
  if (!a->name || !*a->name)
    return cts_fail(t, "%s: an attribute has no name", where);
  if (a->type < XRT_ATTRIBUTE_INT || a->type > XRT_ATTRIBUTE_BOOL)
    return cts_fail(t, "%s: attribute %s has type %d", where, a->name,
                    (int)a->type);
  if (a->type == XRT_ATTRIBUTE_STRING && !a->string_value)
    return cts_fail(t, "%s: string attribute %s is NULL", where, a->name);
  return CTS_PASS;
}

static bool cts_attribute_eq(const xrt_attribute *a, const xrt_attribute *b) {
  if (a->type != b->type || strcmp(a->name, b->name) != 0) return false;
  switch (a->type) {
  case XRT_ATTRIBUTE_INT: return a->int_value == b->int_value;
  case XRT_ATTRIBUTE_FLOAT:
    return a->float_value == b->float_value ||
           (isnan(a->float_value) && isnan(b->float_value));
  case XRT_ATTRIBUTE_STRING:
    return strcmp(a->string_value, b->string_value) == 0;
  case XRT_ATTRIBUTE_BOOL: return a->bool_value == b->bool_value;
  }
  return false;
}

/* The plugin's description of itself: ABI, names, versions, attributes. */
static cts_result t_basic_info(cts *t, xrt_client *none, const void *arg) {
  (void)none, (void)arg;
  const xrt_plugin_info *in = &t->info;
  long lo, hi;
  int64_t minor = in->abi_minor; /* signed: MIN_MINOR may be 0 */
  if (in->abi_major != XRT_PLUGIN_ABI_MAJOR ||
      minor < XRT_PLUGIN_ABI_MIN_MINOR)
    return cts_fail(t, "ABI %u.%u loaded, but xrt takes %d.%d or a later "
                    "minor", in->abi_major, in->abi_minor,
                    XRT_PLUGIN_ABI_MAJOR, XRT_PLUGIN_ABI_MIN_MINOR);
  if (!in->name || !*in->name) return cts_fail(t, "empty registration name");
  if (!in->platform_name || !*in->platform_name)
    return cts_fail(t, "empty platform name");
  if (!in->platform_version || !*in->platform_version)
    return cts_fail(t, "empty platform version");
  if (!in->path || !*in->path)
    return cts_fail(t, "a loaded plugin's info has no library path");
  if (!cts_parse_version(in->stablehlo_min, &lo) ||
      !cts_parse_version(in->stablehlo_max, &hi))
    return cts_fail(t, "StableHLO range \"%s\"..\"%s\" is not X.Y.Z..X.Y.Z",
                    in->stablehlo_min ? in->stablehlo_min : "(null)",
                    in->stablehlo_max ? in->stablehlo_max : "(null)");
  if (lo > hi)
    return cts_fail(t, "StableHLO range %s..%s is empty", in->stablehlo_min,
                    in->stablehlo_max);
  if (in->num_attributes < 0 || (in->num_attributes > 0 && !in->attributes))
    return cts_fail(t, "%d platform attributes at %p", in->num_attributes,
                    (const void *)in->attributes);
  for (int i = 0; i < in->num_attributes; i++)
    if (cts_check_attribute(t, "platform", &in->attributes[i]) != CTS_PASS)
      return CTS_FAIL;
  xrt_plugin_info again;
  xrt_status s = xrt_plugin_get_info(t->plugin, &again);
  if (s) return cts_fail_status(t, "xrt_plugin_get_info", s);
  if (strcmp(again.name, in->name) != 0 ||
      again.capabilities != in->capabilities || again.dtypes != in->dtypes)
    return cts_fail(t, "xrt_plugin_get_info answers differently twice");
  if (xrt_plugin_get_info(NULL, &again) != XRT_INVALID_ARGUMENT)
    return cts_fail(t, "xrt_plugin_get_info(NULL) is not INVALID_ARGUMENT");
  return CTS_PASS;
}

/* Loading the same library again returns the same registration. */
static cts_result t_basic_load_again(cts *t, xrt_client *none,
                                     const void *arg) {
  (void)none, (void)arg;
  xrt_plugin *p = NULL;
  xrt_status s = xrt_context_load_plugin(t->ctx, NULL, t->path, &p);
  if (s) return cts_fail_status(t, "xrt_context_load_plugin (again)", s);
  if (p != t->plugin)
    return cts_fail(t, "loading %s again made a second registration",
                    t->path);
  if (xrt_context_plugin_count(t->ctx) != 1)
    return cts_fail(t, "the context holds %d plugins, want 1",
                    xrt_context_plugin_count(t->ctx));
  if (xrt_context_plugin(t->ctx, 0) != t->plugin ||
      xrt_context_find_plugin(t->ctx, t->info.name) != t->plugin)
    return cts_fail(t, "the context does not list the plugin as '%s'",
                    t->info.name);
  return CTS_PASS;
}

/* A client can be created, describes itself, is released, and a second
 * one can be created after it. */
static cts_result t_basic_client(cts *t, xrt_client *none, const void *arg) {
  (void)none, (void)arg;
  cts_result r = CTS_PASS;
  xrt_client *c = NULL;
  for (int round = 0; round < 2; round++) {
    CTS_PROPAGATE(cts_client(t, &c));
    const char *platform = xrt_client_platform(c);
    CTS_CHECK(platform && *platform, "xrt_client_platform is empty");
    CTS_CHECK(xrt_client_plugin(c) == t->plugin,
              "xrt_client_plugin is not the loaded plugin");
    xrt_client_stats st;
    CTS_TRY(xrt_client_get_stats(c, &st));
    CTS_CHECK(st.executions == 0 && st.compiles == 0,
              "a new client has run %llu executions and %llu compiles",
              (unsigned long long)st.executions,
              (unsigned long long)st.compiles);
    xrt_client_release(c);
    c = NULL;
  }
done:
  xrt_client_release(c);
  return r;
}

/* Devices: a count of at least one, ids, kinds and attributes readable by
 * index and by name. */
static cts_result t_basic_devices(cts *t, xrt_client *c, const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  int n = xrt_client_device_count(c);
  CTS_CHECK(n >= 1, "xrt_client_device_count = %d", n);
  for (int i = 0; i < n; i++) {
    xrt_device *d = xrt_client_device(c, i);
    CTS_CHECK(d, "device %d of %d is NULL: %s", i, n, xrt_last_error());
    CTS_CHECK(xrt_device_id(d) == i, "device %d has id %d", i,
              xrt_device_id(d));
    const char *kind = xrt_device_kind(d);
    CTS_CHECK(kind && *kind, "device %d has no kind", i);
    int na = xrt_device_attribute_count(d);
    CTS_CHECK(na >= 0, "device %d: attribute count %d", i, na);
    for (int k = 0; k < na; k++) {
      xrt_attribute a, b;
      char where[32];
      snprintf(where, sizeof where, "device %d", i);
      CTS_TRY(xrt_device_attribute_get(d, k, &a));
      CTS_PROPAGATE(cts_check_attribute(t, where, &a));
      CTS_TRY(xrt_device_attribute_find(d, a.name, &b));
      CTS_CHECK(cts_attribute_eq(&a, &b), "device %d: attribute %s differs "
                "by index and by name", i, a.name);
    }
    xrt_attribute a;
    CTS_CHECK(xrt_device_attribute_get(d, na, &a) != XRT_OK,
              "device %d: attribute %d of %d was returned", i, na, na);
    CTS_EXPECT_CODE(xrt_device_attribute_find(d, "cts.no-such-attribute", &a),
                    XRT_NOT_FOUND);
  }
  CTS_CHECK(xrt_client_device(c, n) == NULL, "device %d of %d exists", n, n);
  CTS_CHECK(xrt_client_device(c, -1) == NULL, "device -1 exists");
done:
  return r;
}

/* The topology given at creation is the client's; inconsistent ones are
 * refused. */
static cts_result t_basic_topology(cts *t, xrt_client *none, const void *arg) {
  (void)none, (void)arg;
  cts_result r = CTS_PASS;
  xrt_client *c = NULL;
  xrt_client_options o;
  cts_client_options(t, cts_devices_to_ask(t), &o);
  o.topology = (xrt_topology){.process_index = 1, .process_count = 2,
                              .host_index = 0, .local_rank = 1,
                              .local_world_size = 2};
  CTS_TRY(xrt_client_create(&o, &c));
  xrt_topology got;
  CTS_TRY(xrt_client_topology(c, &got));
  CTS_CHECK(got.process_index == 1 && got.process_count == 2 &&
            got.host_index == 0 && got.local_rank == 1 &&
            got.local_world_size == 2,
            "topology 1/2, host 0, local 1/2 reads back as %d/%d, host %d, "
            "local %d/%d", got.process_index, got.process_count,
            got.host_index, got.local_rank, got.local_world_size);
  xrt_client_release(c);
  c = NULL;
  o.topology.process_index = 2;
  CTS_EXPECT_CODE(xrt_client_create(&o, &c), XRT_INVALID_ARGUMENT);
  CTS_CHECK(c == NULL, "a client was returned with the error");
done:
  xrt_client_release(c);
  return r;
}

/* An exclusive plugin refuses a second client while the first lives. */
static cts_result t_basic_exclusive(cts *t, xrt_client *none, const void *arg) {
  (void)none, (void)arg;
  cts_result r = CTS_PASS;
  xrt_client *a = NULL, *b = NULL;
  CTS_PROPAGATE(cts_client(t, &a));
  xrt_status s = cts_open(t, cts_devices_to_ask(t), &b);
  CTS_CHECK(s != XRT_OK, "a second client of an exclusive device was made");
  CTS_CHECK(*xrt_last_error(), "the second client failed (%s) without a "
            "message", xrt_strerror(s));
  xrt_client_release(a);
  a = NULL;
  CTS_TRY(cts_open(t, cts_devices_to_ask(t), &b));
done:
  xrt_client_release(a);
  xrt_client_release(b);
  return r;
}

/* ======================================================================
 * 5. buffers.*
 * ==================================================================== */

static const int64_t cts_rt_dims[][4] = {{0}, {7}, {3, 0, 2}, {2, 3, 5},
                                         {1, 1, 1, 4}, {257}};
static const int cts_rt_ranks[] = {0, 1, 3, 3, 4, 1};

/* Every shape round-trips bit-exactly, keeps its shape, size and device,
 * and refuses a destination that is too small; with several devices it
 * also survives a copy to the last one. */
static cts_result t_buffers_roundtrip(cts *t, xrt_client *c, const void *arg) {
  xrt_dtype d = (xrt_dtype)(intptr_t)arg;
  cts_result r = CTS_PASS;
  uint8_t *src = NULL, *dst = NULL;
  char sh[128];
  int ndev = xrt_client_device_count(c);
  for (int k = 0; k < CTS_COUNT(cts_rt_ranks); k++) {
    xrt_shape s = cts_shape(d, cts_rt_ranks[k], cts_rt_dims[k]), got;
    size_t bytes = xrt_shape_bytes(&s);
    xrt_buffer *b = NULL, *copy = NULL;
    xrt_device *d0 = xrt_client_device(c, 0);
    cts_shape_str(&s, sh, sizeof sh);
    free(src), free(dst);
    src = malloc(bytes + 1), dst = malloc(bytes + 1);
    CTS_CHECK(src && dst, "out of host memory");
    cts_fill_pattern(d, src, xrt_shape_numel(&s), (unsigned)k);
    CTS_TRY(xrt_buffer_from_host(c, d0, &s, bytes ? src : NULL, &b));
    CTS_TRY(xrt_buffer_shape(b, &got));
    CTS_CHECK(cts_shape_eq(&got, &s), "%s reads back as another shape", sh);
    CTS_CHECK(xrt_buffer_bytes(b) == bytes, "%s: %zu bytes, want %zu", sh,
              xrt_buffer_bytes(b), bytes);
    CTS_CHECK(xrt_buffer_device(b) == d0, "%s: not on device 0", sh);
    memset(dst, 0xa5, bytes + 1);
    CTS_TRY(xrt_buffer_to_host(b, dst, bytes));
    CTS_CHECK(memcmp(src, dst, bytes) == 0, "%s: data changed in a round "
              "trip", sh);
    CTS_CHECK(dst[bytes] == 0xa5, "%s: wrote past the %zu bytes", sh, bytes);
    if (bytes)
      CTS_EXPECT_CODE(xrt_buffer_to_host(b, dst, bytes - 1),
                      XRT_INVALID_ARGUMENT);
    if (ndev > 1) {
      xrt_device *last = xrt_client_device(c, ndev - 1);
      CTS_TRY(xrt_buffer_copy_to_device(b, last, &copy));
      CTS_CHECK(xrt_buffer_device(copy) == last, "%s: the copy is not on "
                "device %d", sh, ndev - 1);
      memset(dst, 0, bytes + 1);
      CTS_TRY(xrt_buffer_to_host(copy, dst, bytes));
      CTS_CHECK(memcmp(src, dst, bytes) == 0, "%s: data changed in a copy "
                "to device %d", sh, ndev - 1);
      CTS_TRY(xrt_buffer_release(copy));
    }
    CTS_TRY(xrt_buffer_release(b));
  }
done:
  free(src);
  free(dst);
  return r;
}

/* Synchronous and asynchronous copies between two devices. */
static cts_result t_buffers_copy_device(cts *t, xrt_client *c,
                                        const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_buffer *b = NULL, *c1 = NULL, *c2 = NULL;
  xrt_event *ev = NULL;
  uint8_t src[6 * 8], dst[6 * 8];
  int n = xrt_client_device_count(c);
  if (n < 2) {
    r = cts_skip(t, "the client has %d device (copies need 2)", n);
    goto done;
  }
  xrt_shape s = cts_shape(t->dt, 2, (const int64_t[]){2, 3});
  size_t bytes = xrt_shape_bytes(&s);
  cts_fill_pattern(t->dt, src, 6, 3);
  xrt_device *d0 = xrt_client_device(c, 0), *d1 = xrt_client_device(c, 1);
  CTS_TRY(xrt_buffer_from_host(c, d0, &s, src, &b));
  CTS_TRY(xrt_buffer_copy_to_device(b, d1, &c1));
  CTS_CHECK(xrt_buffer_device(c1) == d1, "the copy is not on device 1");
  CTS_TRY(xrt_buffer_to_host(c1, dst, bytes));
  CTS_CHECK(memcmp(src, dst, bytes) == 0, "data changed in a copy");
  CTS_TRY(xrt_buffer_copy_to_device_async(c1, d0, &c2));
  CTS_TRY(xrt_buffer_ready_event(c2, &ev));
  CTS_TRY(xrt_event_await(ev));
  memset(dst, 0, sizeof dst);
  CTS_TRY(xrt_buffer_to_host(c2, dst, bytes));
  CTS_CHECK(memcmp(src, dst, bytes) == 0, "data changed in an async copy");
done:
  xrt_event_release(ev);
  return r;
}

/* from_host_async and to_host_async complete their events and move the
 * right bytes. */
static cts_result t_buffers_async(cts *t, xrt_client *c, const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_buffer *b = NULL;
  xrt_event *up = NULL, *down = NULL, *ready = NULL;
  enum { N = 1000 };
  static uint8_t src[N * 8], dst[N * 8];
  xrt_shape s = cts_shape(t->dt, 1, (const int64_t[]){N});
  size_t bytes = xrt_shape_bytes(&s);
  cts_fill_pattern(t->dt, src, N, 9);
  memset(dst, 0, sizeof dst);
  CTS_TRY(xrt_buffer_from_host_async(c, xrt_client_device(c, 0), &s, src, &b,
                                     &up));
  CTS_CHECK(up, "from_host_async returned no event");
  CTS_TRY(xrt_event_await(up));
  CTS_CHECK(xrt_event_is_ready(up), "an awaited event is not ready");
  CTS_EXPECT_CODE(xrt_event_status(up), XRT_OK);
  CTS_TRY(xrt_buffer_ready_event(b, &ready));
  CTS_TRY(xrt_event_await(ready));
  CTS_TRY(xrt_buffer_to_host_async(b, dst, bytes, &down));
  CTS_CHECK(down, "to_host_async returned no event");
  CTS_TRY(xrt_event_await(down));
  CTS_CHECK(memcmp(src, dst, bytes) == 0, "data changed in an async round "
            "trip");
done:
  xrt_event_release(up);
  xrt_event_release(down);
  xrt_event_release(ready);
  return r;
}

/* A released buffer is refused everywhere with INVALID_ARGUMENT. */
static cts_result t_buffers_release(cts *t, xrt_client *c, const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_buffer *b = NULL, *keep = NULL, *out = NULL;
  uint8_t src[4 * 8], dst[4 * 8];
  xrt_device *d0 = xrt_client_device(c, 0);
  xrt_shape s = cts_shape(t->dt, 1, (const int64_t[]){4}), got;
  size_t bytes = xrt_shape_bytes(&s);
  cts_fill_pattern(t->dt, src, 4, 1);
  CTS_TRY(xrt_buffer_from_host(c, d0, &s, src, &b));
  CTS_TRY(xrt_buffer_from_host(c, d0, &s, src, &keep));
  CTS_TRY(xrt_buffer_release(b));
  CTS_EXPECT_CODE(xrt_buffer_to_host(b, dst, bytes), XRT_INVALID_ARGUMENT);
  CTS_EXPECT_CODE(xrt_buffer_shape(b, &got), XRT_INVALID_ARGUMENT);
  CTS_EXPECT_CODE(xrt_buffer_copy_to_device(b, d0, &out),
                  XRT_INVALID_ARGUMENT);
  CTS_CHECK(out == NULL, "a copy of a released buffer was returned");
  CTS_CHECK(xrt_buffer_bytes(b) == 0, "a released buffer has bytes");
  CTS_CHECK(xrt_buffer_device(b) == NULL, "a released buffer has a device");
  CTS_EXPECT_CODE(xrt_buffer_release(b), XRT_INVALID_ARGUMENT);
  CTS_TRY(xrt_buffer_to_host(keep, dst, bytes));
  CTS_CHECK(memcmp(src, dst, bytes) == 0, "another buffer changed");
done:
  return r;
}

/* Malformed uploads are INVALID_ARGUMENT and make no buffer. */
static cts_result t_buffers_bad_input(cts *t, xrt_client *c, const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_buffer *b = NULL;
  uint8_t src[64] = {0};
  xrt_device *d0 = xrt_client_device(c, 0);
  xrt_shape good = cts_shape(t->dt, 1, (const int64_t[]){4});
  xrt_shape bad_type = good, bad_dim = good, bad_rank = good;
  bad_type.dtype = (xrt_dtype)99;
  bad_dim.dims[0] = -1;
  bad_rank.rank = XRT_MAX_RANK + 1;
  const struct {
    const char *call;
    xrt_client *client;
    xrt_device *dev;
    const xrt_shape *shape;
    const void *data;
  } bad[] = {
      {"xrt_buffer_from_host(c, d0, NULL, src, &b)", c, d0, NULL, src},
      {"xrt_buffer_from_host(c, d0, &bad_type, src, &b)", c, d0, &bad_type,
       src},
      {"xrt_buffer_from_host(c, d0, &bad_dim, src, &b)", c, d0, &bad_dim, src},
      {"xrt_buffer_from_host(c, d0, &bad_rank, src, &b)", c, d0, &bad_rank,
       src},
      {"xrt_buffer_from_host(c, d0, &good, NULL, &b)", c, d0, &good, NULL},
      {"xrt_buffer_from_host(c, NULL, &good, src, &b)", c, NULL, &good, src},
      {"xrt_buffer_from_host(NULL, d0, &good, src, &b)", NULL, d0, &good, src},
  };
  for (int i = 0; i < CTS_COUNT(bad); i++)
    CTS_PROPAGATE(cts_expect_code(
        t, bad[i].call,
        xrt_buffer_from_host(bad[i].client, bad[i].dev, bad[i].shape,
                             bad[i].data, &b),
        XRT_INVALID_ARGUMENT));
  CTS_CHECK(b == NULL, "a buffer was returned with an error");
done:
  return r;
}

/* ======================================================================
 * 6. compile.*
 * ==================================================================== */

/* A program xrt's verifier refuses, and where it must say the fault is. */
typedef struct cts_bad_program {
  const char *src, *where;
} cts_bad_program;

static const cts_bad_program cts_type_error = {
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  %1 = stablehlo.add %0, %b : (tensor<4xf32>, tensor<4xf32>) -> "
    "tensor<4xi32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n",
    "cts.mlir:3:8:"};

static const cts_bad_program cts_syntax_error = {
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n",
    "cts.mlir:2:"};

/* A bad program is INVALID_ARGUMENT from compile, with file:line:col of
 * the faulty op (an error of xrt's verifier, whatever the plugin). */
static cts_result t_compile_error(cts *t, xrt_client *c, const void *arg) {
  const cts_bad_program *bad = arg;
  cts_result r = CTS_PASS;
  xrt_executable *exe = NULL;
  char *text = cts_source(t, bad->src);
  CTS_CHECK(text, "out of host memory");
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "cts.mlir";
  CTS_EXPECT_CODE(xrt_compile(c, text, strlen(text), &o, &exe),
                  XRT_INVALID_ARGUMENT);
  CTS_CHECK(strstr(xrt_last_error(), bad->where), "the message does not "
            "hold %s: %s", bad->where, xrt_last_error());
  CTS_CHECK(exe == NULL, "an executable was returned with the error");
done:
  free(text);
  return r;
}

/* An elementwise binary op on tensor<2x3x[d]>. */
static void cts_binop_src(xrt_dtype d, const char *op, char *buf,
                          size_t cap) {
  const char *e = xrt_dtype_name(d);
  snprintf(buf, cap,
           "func.func @main(%%a: tensor<2x3x%s>, %%b: tensor<2x3x%s>) -> "
           "tensor<2x3x%s> {\n"
           "  %%0 = stablehlo.%s %%a, %%b : tensor<2x3x%s>\n"
           "  func.return %%0 : tensor<2x3x%s>\n"
           "}\n", e, e, e, op, e, e);
}

/* query_support on a simple add agrees with compile, and the executable
 * describes its signature. */
static cts_result t_compile_query_support(cts *t, xrt_client *c,
                                          const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_executable *exe = NULL;
  xrt_support v = XRT_SUPPORT_MAYBE;
  char src[512];
  cts_binop_src(t->dt, "add", src, sizeof src);
  cts_result q = cts_compile(t, c, "cts_add.mlir", src, NULL, &exe, &v);
  if (q == CTS_SKIP && v == XRT_SUPPORT_NO) q = CTS_PASS; /* honest NO */
  CTS_PROPAGATE(q);
  if (!exe) goto done;
  xrt_shape want = cts_shape(t->dt, 2, (const int64_t[]){2, 3}), got;
  CTS_CHECK(xrt_executable_num_inputs(exe) == 2 &&
            xrt_executable_num_outputs(exe) == 1,
            "the executable has %d inputs and %d outputs, want 2 and 1",
            xrt_executable_num_inputs(exe), xrt_executable_num_outputs(exe));
  for (int i = 0; i < 2; i++) {
    CTS_TRY(xrt_executable_input_shape(exe, i, &got));
    CTS_CHECK(cts_shape_eq(&got, &want), "input %d has another shape", i);
  }
  CTS_TRY(xrt_executable_output_shape(exe, 0, &got));
  CTS_CHECK(cts_shape_eq(&got, &want), "the output has another shape");
  CTS_CHECK(strcmp(xrt_executable_name(exe), "main") == 0,
            "the executable is named '%s', want 'main'",
            xrt_executable_name(exe));
done:
  return r;
}

/* A program stating a StableHLO version outside the plugin's range is
 * refused, naming both versions, and query_support says NO for "module". */
static cts_result t_compile_version(cts *t, xrt_client *c, const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_program *prog = NULL;
  xrt_executable *exe = NULL;
  xrt_support_report *rep = NULL;
  long hi;
  char text[1024], body[512], version[32];
  CTS_CHECK(cts_parse_version(t->info.stablehlo_max, &hi),
            "StableHLO max \"%s\" is not X.Y.Z", t->info.stablehlo_max);
  snprintf(version, sizeof version, "%ld.0.0", hi / 100000000 + 1);
  cts_binop_src(t->dt, "add", body, sizeof body);
  snprintf(text, sizeof text,
           "module attributes {stablehlo.version = \"%s\"} {\n%s}\n", version,
           body);
  CTS_TRY(xrt_program_parse(text, strlen(text), NULL, &prog));
  CTS_TRY(xrt_client_query_support(c, prog, NULL, &rep));
  CTS_CHECK(xrt_support_report_verdict(rep) == XRT_SUPPORT_NO,
            "query_support on StableHLO %s (plugin: %s..%s) says %s", version,
            t->info.stablehlo_min, t->info.stablehlo_max,
            cts_support_name(xrt_support_report_verdict(rep)));
  const xrt_support_issue *is = xrt_support_report_issue(rep, 0);
  CTS_CHECK(is && is->op && strcmp(is->op, "module") == 0,
            "query_support's first issue is %s, want \"module\"",
            is && is->op ? is->op : "missing");
  xrt_status s = xrt_compile_program(c, prog, NULL, &exe);
  CTS_CHECK(s != XRT_OK, "StableHLO %s compiled (plugin: %s..%s)", version,
            t->info.stablehlo_min, t->info.stablehlo_max);
  CTS_CHECK(strstr(xrt_last_error(), version) &&
            strstr(xrt_last_error(), t->info.stablehlo_max),
            "the refusal does not name %s and %s: %s", version,
            t->info.stablehlo_max, xrt_last_error());
done:
  xrt_support_report_release(rep);
  xrt_program_release(prog);
  return r;
}

/* ======================================================================
 * 7. execute.*
 * ==================================================================== */

/* One elementwise binary op on tensor<2x3x[dt]> with known results, run
 * three times with different inputs (executables are reusable). */
typedef struct cts_binop {
  const char *op;
  xrt_dtype dt;
} cts_binop;

static const cts_binop cts_binops[] = {
    {"add", XRT_F32}, {"multiply", XRT_F32}, {"add", XRT_S32},
    {"multiply", XRT_S32}};

static double cts_apply(const char *op, double a, double b) {
  return strcmp(op, "add") == 0 ? a + b : a * b;
}

static cts_result t_execute_binop(cts *t, xrt_client *c, const void *arg) {
  const cts_binop *bo = arg;
  cts_result r = CTS_PASS;
  xrt_executable *exe = NULL;
  char src[512];
  float fa[6], fb[6];
  int32_t ia[6], ib[6];
  void *a = bo->dt == XRT_F32 ? (void *)fa : (void *)ia;
  void *b = bo->dt == XRT_F32 ? (void *)fb : (void *)ib;
  void *data[2] = {a, b};
  double want[6];
  cts_binop_src(bo->dt, bo->op, src, sizeof src);
  CTS_PROPAGATE(cts_compile(t, c, "cts_binop.mlir", src, NULL, &exe, NULL));
  xrt_shape s = cts_shape(bo->dt, 2, (const int64_t[]){2, 3});
  const xrt_shape shapes[2] = {s, s};
  cts_run run = {.nin = 2, .in = shapes, .in_data = data, .out = s,
                 .want = want, .rtol = -1};
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 6; i++) {
      double x = (i - 2) * 1.5 + round, y = (round - i) * 0.75 + 2;
      if (bo->dt == XRT_S32) x = (i - 2) * 3 + round, y = round - i + 7;
      cts_put(bo->dt, a, i, x);
      cts_put(bo->dt, b, i, y);
      want[i] = cts_apply(bo->op, cts_get(bo->dt, a, i), cts_get(bo->dt, b, i));
    }
    CTS_PROPAGATE(cts_execute_check(t, c, exe, &run));
  }
done:
  return r;
}

/* Adds of a scalar and of an empty array. */
static cts_result t_execute_edge_shapes(cts *t, xrt_client *c,
                                        const void *arg) {
  (void)arg;
  static const char scalar_src[] =
      "func.func @main(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = stablehlo.add %a, %b : tensor<f32>\n"
      "  func.return %0 : tensor<f32>\n"
      "}\n";
  static const char empty_src[] =
      "func.func @main(%a: tensor<3x0xf32>, %b: tensor<3x0xf32>) -> "
      "tensor<3x0xf32> {\n"
      "  %0 = stablehlo.add %a, %b : tensor<3x0xf32>\n"
      "  func.return %0 : tensor<3x0xf32>\n"
      "}\n";
  float a = 2.5f, b = -0.25f, e[1] = {0};
  const double want = 2.25;
  void *sd[2] = {&a, &b}, *ed[2] = {e, e};
  xrt_shape ss = cts_shape(XRT_F32, 0, NULL);
  xrt_shape es = cts_shape(XRT_F32, 2, (const int64_t[]){3, 0});
  const xrt_shape sshapes[2] = {ss, ss}, eshapes[2] = {es, es};
  cts_run scalar = {.file = "cts_scalar.mlir", .src = scalar_src, .nin = 2,
                    .in = sshapes, .in_data = sd, .out = ss, .want = &want,
                    .rtol = -1};
  cts_run empty = {.file = "cts_empty.mlir", .src = empty_src, .nin = 2,
                   .in = eshapes, .in_data = ed, .out = es, .want = &want,
                   .rtol = -1};
  cts_result r = cts_run_program(t, c, &scalar);
  return r == CTS_PASS ? cts_run_program(t, c, &empty) : r;
}

/* Records one on_ready callback. */
typedef struct cts_cb {
  pthread_t registrar;
  atomic_int calls, status, same_thread, message_set;
} cts_cb;

static void cts_on_ready(void *user, xrt_status status, const char *message) {
  cts_cb *cb = user;
  if (pthread_equal(pthread_self(), cb->registrar))
    atomic_store(&cb->same_thread, 1);
  atomic_store(&cb->status, (int)status);
  atomic_store(&cb->message_set, message && *message);
  atomic_fetch_add(&cb->calls, 1);
}

/* Waits (at most 10 s) for a callback the runtime owes: a missing one is a
 * failure, not a hang. */
static bool cts_wait_calls(cts_cb *cb, int n) {
  struct timespec ms = {0, 1000000};
  for (int i = 0; i < 10000 && atomic_load(&cb->calls) < n; i++)
    nanosleep(&ms, NULL);
  return atomic_load(&cb->calls) >= n;
}

static cts_result cts_check_cb(cts *t, cts_cb *cb, const char *when) {
  if (!cts_wait_calls(cb, 1))
    return cts_fail(t, "on_ready registered %s was not called in 10 s", when);
  if (atomic_load(&cb->calls) != 1)
    return cts_fail(t, "on_ready registered %s ran %d times", when,
                    atomic_load(&cb->calls));
  if (atomic_load(&cb->status) != XRT_OK || atomic_load(&cb->message_set))
    return cts_fail(t, "on_ready registered %s got status %s and a message",
                    when, xrt_strerror((xrt_status)atomic_load(&cb->status)));
  if (atomic_load(&cb->same_thread))
    return cts_fail(t, "on_ready registered %s ran on the registering "
                    "thread", when);
  return CTS_PASS;
}

/* execute_async over arguments still being uploaded: the done event
 * completes, callbacks run once each (before and after completion), the
 * output is ready and right. */
static cts_result t_execute_async(cts *t, xrt_client *c, const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_executable *exe = NULL;
  xrt_buffer *args[2] = {NULL, NULL}, *out = NULL;
  xrt_event *up[2] = {NULL, NULL}, *done_ev = NULL, *ready = NULL,
            *down = NULL;
  enum { N = 4096 };
  static float a[N], b[N], o[N];
  static double want[N];
  cts_cb before, after;
  memset(&before, 0, sizeof before);
  memset(&after, 0, sizeof after);
  before.registrar = after.registrar = pthread_self();
  static const char src[] =
      "func.func @main(%a: tensor<4096xf32>, %b: tensor<4096xf32>) -> "
      "tensor<4096xf32> {\n"
      "  %0 = stablehlo.add %a, %b : tensor<4096xf32>\n"
      "  func.return %0 : tensor<4096xf32>\n"
      "}\n";
  CTS_PROPAGATE(cts_compile(t, c, "cts_async.mlir", src, NULL, &exe, NULL));
  for (int i = 0; i < N; i++) {
    a[i] = (float)i * 0.5f, b[i] = (float)(N - i);
    want[i] = (double)a[i] + (double)b[i];
  }
  xrt_shape s = cts_shape(XRT_F32, 1, (const int64_t[]){N});
  xrt_device *d0 = xrt_client_device(c, 0);
  CTS_TRY(xrt_buffer_from_host_async(c, d0, &s, a, &args[0], &up[0]));
  CTS_TRY(xrt_buffer_from_host_async(c, d0, &s, b, &args[1], &up[1]));
  CTS_TRY(xrt_execute_async(exe, d0, args, 2, &out, 1, NULL, &done_ev));
  CTS_CHECK(out && done_ev, "execute_async returned no output or event");
  CTS_TRY(xrt_event_on_ready(done_ev, cts_on_ready, &before));
  CTS_TRY(xrt_event_await(done_ev));
  CTS_TRY(xrt_event_on_ready(done_ev, cts_on_ready, &after));
  CTS_PROPAGATE(cts_check_cb(t, &before, "before completion"));
  CTS_PROPAGATE(cts_check_cb(t, &after, "after completion"));
  CTS_TRY(xrt_buffer_ready_event(out, &ready));
  CTS_CHECK(xrt_event_is_ready(ready), "the output is not ready after the "
            "execution's event");
  CTS_TRY(xrt_buffer_to_host_async(out, o, sizeof o, &down));
  CTS_TRY(xrt_event_await(down));
  CTS_PROPAGATE(cts_compare(t, "result", XRT_F32, o, want, N, -1, 0));
done:
  for (int i = 0; i < 2; i++) xrt_event_release(up[i]);
  xrt_event_release(done_ev);
  xrt_event_release(ready);
  xrt_event_release(down);
  return r;
}

/* Compiles the add of two tensor<2x3x[dt]> (cts_add.mlir) and uploads
 * two inputs for it (zeros) to device 0. */
static cts_result cts_add_fixture(cts *t, xrt_client *c, xrt_executable **exe,
                                  xrt_buffer **args) {
  static uint8_t zeros[6 * 16]; /* 2x3 of the widest type */
  char src[512];
  cts_binop_src(t->dt, "add", src, sizeof src);
  cts_result r = cts_compile(t, c, "cts_add.mlir", src, NULL, exe, NULL);
  if (r != CTS_PASS) return r;
  xrt_shape s = cts_shape(t->dt, 2, (const int64_t[]){2, 3});
  const xrt_shape shapes[2] = {s, s};
  void *const data[2] = {zeros, zeros};
  return cts_upload(t, c, xrt_client_device(c, 0), 2, shapes, data, args);
}

/* Wrong arguments are INVALID_ARGUMENT before anything runs, with no
 * output returned. */
static cts_result t_execute_bad_args(cts *t, xrt_client *c,
                                     const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_executable *exe = NULL;
  xrt_buffer *good[2] = {NULL, NULL}, *wrong = NULL, *gone = NULL;
  xrt_buffer *outs[2] = {NULL, NULL};
  uint8_t data[6 * 16] = {0};
  CTS_PROPAGATE(cts_add_fixture(t, c, &exe, good));
  xrt_device *d0 = xrt_client_device(c, 0);
  xrt_shape s = cts_shape(t->dt, 2, (const int64_t[]){2, 3});
  xrt_shape ws = cts_shape(t->dt, 2, (const int64_t[]){3, 2});
  CTS_TRY(xrt_buffer_from_host(c, d0, &ws, data, &wrong));
  CTS_TRY(xrt_buffer_from_host(c, d0, &s, data, &gone));
  CTS_TRY(xrt_buffer_release(gone));
  xrt_buffer *shape_mix[2] = {good[0], wrong}, *stale[2] = {gone, good[1]};
  const struct {
    const char *call;
    xrt_device *dev;
    xrt_buffer *const *args;
    int nargs, nouts;
  } bad[] = {
      {"xrt_execute(exe, d0, shape_mix, 2, outs, 1, NULL)", d0, shape_mix, 2,
       1},
      {"xrt_execute(exe, d0, stale, 2, outs, 1, NULL)", d0, stale, 2, 1},
      {"xrt_execute(exe, d0, good, 1, outs, 1, NULL)", d0, good, 1, 1},
      {"xrt_execute(exe, d0, good, 2, outs, 2, NULL)", d0, good, 2, 2},
      {"xrt_execute(exe, NULL, good, 2, outs, 1, NULL)", NULL, good, 2, 1},
      {"xrt_execute(exe, d0, NULL, 2, outs, 1, NULL)", d0, NULL, 2, 1},
  };
  for (int i = 0; i < CTS_COUNT(bad); i++)
    CTS_PROPAGATE(cts_expect_code(
        t, bad[i].call,
        xrt_execute(exe, bad[i].dev, bad[i].args, bad[i].nargs, outs,
                    bad[i].nouts, NULL),
        XRT_INVALID_ARGUMENT));
  CTS_EXPECT_CODE(xrt_execute_async(exe, d0, shape_mix, 2, outs, 1, NULL,
                                    NULL), XRT_INVALID_ARGUMENT);
  CTS_CHECK(!outs[0] && !outs[1], "an output was returned with an error");
  CTS_TRY(xrt_execute(exe, d0, good, 2, outs, 1, NULL)); /* still usable */
done:
  return r;
}

/* A released executable is refused with INVALID_ARGUMENT. */
static cts_result t_execute_released(cts *t, xrt_client *c,
                                     const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_executable *exe = NULL;
  xrt_buffer *args[2] = {NULL, NULL}, *out = NULL;
  CTS_PROPAGATE(cts_add_fixture(t, c, &exe, args));
  xrt_device *d0 = xrt_client_device(c, 0);
  CTS_TRY(xrt_executable_release(exe));
  CTS_EXPECT_CODE(xrt_execute(exe, d0, args, 2, &out, 1, NULL),
                  XRT_INVALID_ARGUMENT);
  CTS_CHECK(out == NULL, "a released executable produced an output");
  CTS_CHECK(xrt_executable_num_inputs(exe) == -1,
            "a released executable reports %d inputs",
            xrt_executable_num_inputs(exe));
  CTS_EXPECT_CODE(xrt_executable_release(exe), XRT_INVALID_ARGUMENT);
done:
  return r;
}

/* ======================================================================
 * 8. multi.* and collectives.*
 * ==================================================================== */

/* Runs a one-input, one-output f32 program on n replicas: in[p] holds
 * in_len floats for replica p, out[p] out_len. */
static cts_result cts_run_replicas(cts *t, xrt_client *c, int n,
                                   const char *file, const char *src,
                                   const float *in, int in_len, float *out,
                                   int out_len) {
  cts_result r = CTS_PASS;
  xrt_executable *exe = NULL;
  xrt_buffer *args[64] = {NULL}, *outs[64] = {NULL};
  xrt_buffer *const *lists[64];
  xrt_buffer **olists[64];
  xrt_event *done_ev = NULL;
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = n;
  CTS_PROPAGATE(cts_compile(t, c, file, src, &o, &exe, NULL));
  xrt_shape is = cts_shape(XRT_F32, 1, (const int64_t[]){in_len});
  xrt_shape os = cts_shape(XRT_F32, 1, (const int64_t[]){out_len});
  for (int p = 0; p < n; p++) {
    CTS_TRY(xrt_buffer_from_host(c, xrt_client_device(c, p), &is,
                                 in + (size_t)p * (size_t)in_len, &args[p]));
    lists[p] = &args[p];
    olists[p] = &outs[p];
  }
  CTS_TRY(xrt_execute_multi(exe, lists, n, 1, olists, 1, NULL, &done_ev));
  CTS_TRY(xrt_event_await(done_ev));
  for (int p = 0; p < n; p++) {
    CTS_CHECK(xrt_buffer_device(outs[p]) == xrt_client_device(c, p),
              "the output of replica %d is not on device %d", p, p);
    CTS_PROPAGATE(cts_download(t, outs[p], &os,
                               out + (size_t)p * (size_t)out_len));
  }
done:
  xrt_event_release(done_ev);
  xrt_executable_release(exe);
  return r;
}

/* Fills in[p][i] = 10 p + i + 0.5. */
static void cts_replica_inputs(float *in, int n, int len) {
  for (int p = 0; p < n; p++)
    for (int i = 0; i < len; i++)
      in[p * len + i] = (float)(10 * p + i) + 0.5f;
}

static cts_result cts_compare_replicas(cts *t, const float *out,
                                       const double *want, int n, int len) {
  for (int p = 0; p < n; p++) {
    char what[32];
    snprintf(what, sizeof what, "replica %d: result", p);
    if (cts_compare(t, what, XRT_F32, out + p * len, want + p * len, len, -1,
                    0) != CTS_PASS)
      return CTS_FAIL;
  }
  return CTS_PASS;
}

enum { CTS_MAX_REPLICAS = 64, CTS_RLEN = 3 };

/* A program run on every replica of a client with n devices: its text
 * (made for n from the replica list that list writes, if any), and the
 * output each replica must give from the inputs in[p][i] = 10 p + i + 0.5
 * of CTS_RLEN floats each. */
typedef struct cts_replicated {
  const char *file;
  bool gathers; /* each output holds n * CTS_RLEN floats, else CTS_RLEN */
  void (*list)(char *buf, size_t cap, int n);
  void (*src)(char *buf, size_t cap, int n, const char *list);
  void (*want)(const float *in, int n, double *want);
} cts_replicated;

/* "[[0, 1, ..., n-1]]" */
static void cts_group_all(char *buf, size_t cap, int n) {
  size_t len = (size_t)snprintf(buf, cap, "[[");
  for (int p = 0; p < n && len < cap; p++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%d", p ? ", " : "", p);
  if (len < cap) snprintf(buf + len, cap - len, "]]");
}

/* "[[0, 1], [1, 2], ..., [n-1, 0]]": the ring p -> p + 1. */
static void cts_ring_pairs(char *buf, size_t cap, int n) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int p = 0; p < n && len < cap; p++)
    len += (size_t)snprintf(buf + len, cap - len, "%s[%d, %d]",
                            p ? ", " : "", p, (p + 1) % n);
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

/* execute_multi of a program without collectives: out = 2 in. */
static void cts_twice3_src(char *buf, size_t cap, int n, const char *list) {
  (void)n, (void)list;
  snprintf(buf, cap, "%s",
           "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
           "  %0 = stablehlo.add %a, %a : tensor<3xf32>\n"
           "  func.return %0 : tensor<3xf32>\n"
           "}\n");
}
static void cts_twice3_want(const float *in, int n, double *want) {
  for (int i = 0; i < n * CTS_RLEN; i++) want[i] = 2.0 * in[i];
}

/* all_reduce (sum) over every replica. */
static void cts_all_reduce_src(char *buf, size_t cap, int n,
                               const char *groups) {
  snprintf(buf, cap,
           "func.func @main(%%a: tensor<3xf32>) -> tensor<3xf32> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%a) ({\n"
           "    ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):\n"
           "      %%s = stablehlo.add %%x, %%y : tensor<f32>\n"
           "      stablehlo.return %%s : tensor<f32>\n"
           "  }) {replica_groups = dense<%s> : tensor<1x%dxi64>}\n"
           "    : (tensor<3xf32>) -> tensor<3xf32>\n"
           "  func.return %%r : tensor<3xf32>\n"
           "}\n", groups, n);
}
static void cts_all_reduce_want(const float *in, int n, double *want) {
  for (int i = 0; i < CTS_RLEN; i++) {
    double sum = 0;
    for (int p = 0; p < n; p++) sum += in[p * CTS_RLEN + i];
    for (int p = 0; p < n; p++) want[p * CTS_RLEN + i] = sum;
  }
}

/* all_gather along dimension 0 over every replica. */
static void cts_all_gather_src(char *buf, size_t cap, int n,
                               const char *groups) {
  int len = n * CTS_RLEN;
  snprintf(buf, cap,
           "func.func @main(%%a: tensor<3xf32>) -> tensor<%dxf32> {\n"
           "  %%r = \"stablehlo.all_gather\"(%%a) {all_gather_dim = 0 : i64,\n"
           "      replica_groups = dense<%s> : tensor<1x%dxi64>}\n"
           "    : (tensor<3xf32>) -> tensor<%dxf32>\n"
           "  func.return %%r : tensor<%dxf32>\n"
           "}\n", len, groups, n, len, len);
}
static void cts_all_gather_want(const float *in, int n, double *want) {
  for (int p = 0; p < n; p++)
    for (int k = 0; k < n * CTS_RLEN; k++) want[p * n * CTS_RLEN + k] = in[k];
}

/* collective_permute around the ring p -> p + 1. */
static void cts_permute_src(char *buf, size_t cap, int n,
                            const char *pairs) {
  snprintf(buf, cap,
           "func.func @main(%%a: tensor<3xf32>) -> tensor<3xf32> {\n"
           "  %%r = \"stablehlo.collective_permute\"(%%a) {\n"
           "      source_target_pairs = dense<%s> : tensor<%dx2xi64>}\n"
           "    : (tensor<3xf32>) -> tensor<3xf32>\n"
           "  func.return %%r : tensor<3xf32>\n"
           "}\n", pairs, n);
}
static void cts_permute_want(const float *in, int n, double *want) {
  for (int p = 0; p < n; p++)
    for (int i = 0; i < CTS_RLEN; i++)
      want[p * CTS_RLEN + i] = in[((p + n - 1) % n) * CTS_RLEN + i];
}

static const cts_replicated cts_multi_execute = {
    "cts_multi.mlir", false, NULL, cts_twice3_src, cts_twice3_want};
static const cts_replicated cts_all_reduce = {
    "cts_all_reduce.mlir", false, cts_group_all, cts_all_reduce_src,
    cts_all_reduce_want};
static const cts_replicated cts_all_gather = {
    "cts_all_gather.mlir", true, cts_group_all, cts_all_gather_src,
    cts_all_gather_want};
static const cts_replicated cts_permute = {
    "cts_permute.mlir", false, cts_ring_pairs, cts_permute_src,
    cts_permute_want};

/* Runs a cts_replicated on every device (at most CTS_MAX_REPLICAS) and
 * checks each replica's output. */
static cts_result t_replicated(cts *t, xrt_client *c, const void *arg) {
  const cts_replicated *k = arg;
  static float in[CTS_MAX_REPLICAS * CTS_RLEN];
  static float out[CTS_MAX_REPLICAS * CTS_MAX_REPLICAS * CTS_RLEN];
  static double want[CTS_MAX_REPLICAS * CTS_MAX_REPLICAS * CTS_RLEN];
  static char src[4096], list[2048];
  int n = xrt_client_device_count(c);
  if (n < 2)
    return cts_skip(t, "the client has %d device (asked for %d)", n,
                    t->want_devices);
  if (n > CTS_MAX_REPLICAS) n = CTS_MAX_REPLICAS;
  int out_len = k->gathers ? n * CTS_RLEN : CTS_RLEN;
  list[0] = 0;
  if (k->list) k->list(list, sizeof list, n);
  k->src(src, sizeof src, n, list);
  cts_replica_inputs(in, n, CTS_RLEN);
  k->want(in, n, want);
  cts_result r = cts_run_replicas(t, c, n, k->file, src, in, CTS_RLEN, out,
                                  out_len);
  return r == CTS_PASS ? cts_compare_replicas(t, out, want, n, out_len) : r;
}

/* ======================================================================
 * 9. faults.*
 * ==================================================================== */

static const char cts_twice_src[] =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* Checks a buffer still holds want (4 floats). */
static cts_result cts_expect_floats(cts *t, xrt_buffer *b, const float *want,
                                    const char *what) {
  float got[4];
  xrt_status s = xrt_buffer_to_host(b, got, sizeof got);
  if (s) return cts_fail(t, "%s is unreadable: %s: %s", what,
                         xrt_strerror(s), xrt_last_error());
  if (memcmp(got, want, sizeof got) != 0)
    return cts_fail(t, "%s changed: %g %g %g %g", what, got[0], got[1],
                    got[2], got[3]);
  return CTS_PASS;
}

/* A fault injected into an execution reaches its event and output with the
 * device named; its input and another device's buffer stay readable, and
 * the device runs the next execution. */
static cts_result t_faults_execute(cts *t, xrt_client *c, const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_executable *exe = NULL;
  xrt_buffer *x = NULL, *other = NULL, *y = NULL, *z = NULL;
  xrt_event *done_ev = NULL;
  float in[4] = {1, -2, 3.5f, 8}, twice[4] = {2, -4, 7, 16}, junk[4];
  char name[32];
  int n = xrt_client_device_count(c), k = n - 1;
  xrt_device *dk = xrt_client_device(c, k), *d0 = xrt_client_device(c, 0);
  snprintf(name, sizeof name, "device %d", k);
  CTS_PROPAGATE(cts_compile(t, c, "cts_twice.mlir", cts_twice_src, NULL, &exe,
                            NULL));
  xrt_shape s = cts_shape(XRT_F32, 1, (const int64_t[]){4});
  CTS_TRY(xrt_buffer_from_host(c, dk, &s, in, &x));
  CTS_TRY(xrt_buffer_from_host(c, d0, &s, in, &other));
  CTS_TRY(xrt_device_inject_fault(dk, 0));
  CTS_TRY(xrt_execute_async(exe, dk, &x, 1, &y, 1, NULL, &done_ev));
  xrt_status s1 = xrt_event_await(done_ev);
  CTS_CHECK(s1 != XRT_OK, "the execution with an injected fault succeeded");
  CTS_CHECK(strstr(xrt_last_error(), name), "the fault's message does not "
            "name %s: %s", name, xrt_last_error());
  CTS_CHECK(xrt_buffer_to_host(y, junk, sizeof junk) != XRT_OK,
            "the failed execution's output is readable");
  CTS_PROPAGATE(cts_expect_floats(t, x, in, "the input"));
  CTS_PROPAGATE(cts_expect_floats(t, other, in, "a buffer on device 0"));
  CTS_TRY(xrt_execute(exe, dk, &x, 1, &z, 1, NULL));
  CTS_PROPAGATE(cts_expect_floats(t, z, twice, "the next execution's output"));
done:
  xrt_event_release(done_ev);
  return r;
}

/* A transfer fault (inject_fault_kind) fails one upload, naming the device;
 * the next upload works. */
static cts_result t_faults_transfer(cts *t, xrt_client *c, const void *arg) {
  (void)arg;
  cts_result r = CTS_PASS;
  xrt_buffer *b = NULL, *ok = NULL;
  float in[4] = {4, 3, 2, 1};
  xrt_device *d0 = xrt_client_device(c, 0);
  xrt_status s = xrt_device_inject_fault_kind(d0, XRT_FAULT_TRANSFER, 0);
  if (s == XRT_UNIMPLEMENTED) {
    r = cts_skip(t, "inject_fault_kind (not implemented: %s)",
                 xrt_last_error());
    goto done;
  }
  CTS_CHECK(s == XRT_OK, "inject_fault_kind: %s: %s", xrt_strerror(s),
            xrt_last_error());
  xrt_shape sh = cts_shape(XRT_F32, 1, (const int64_t[]){4});
  float junk[4];
  s = xrt_buffer_from_host(c, d0, &sh, in, &b);
  if (s == XRT_OK) s = xrt_buffer_to_host(b, junk, sizeof junk);
  CTS_CHECK(s != XRT_OK, "the upload with an injected transfer fault "
            "succeeded");
  CTS_CHECK(strstr(xrt_last_error(), "device 0"), "the fault's message does "
            "not name device 0: %s", xrt_last_error());
  CTS_TRY(xrt_buffer_from_host(c, d0, &sh, in, &ok));
  CTS_PROPAGATE(cts_expect_floats(t, ok, in, "the next upload"));
done:
  return r;
}

/* ======================================================================
 * 10. numerics.*
 *
 * Each case is a program, its inputs (from gen) and a reference written
 * here in plain C over doubles (on the inputs as stored, so f32 rounding
 * of inputs is accounted for).
 * ==================================================================== */

typedef struct cts_num {
  const char *name;
  const char *src;
  xrt_dtype in_dt, out_dt;
  int nin;
  int in_rank[3];
  int64_t in_dims[3][4];
  int out_rank;
  int64_t out_dims[4];
  double (*gen)(int arg, int64_t i);
  void (*ref)(const double *const *in, double *out);
  double rtol, atol; /* rtol < 0: exact */
} cts_num;

/* Default inputs: small multiples of 1/4 around zero. */
static double g_small(int arg, int64_t i) {
  return (double)((i * 7 + arg * 3) % 11 - 5) * 0.25;
}
static double g_positive(int arg, int64_t i) {
  return 0.125 + (double)((i * 5 + arg * 3) % 13) * 0.375;
}
static double g_angle(int arg, int64_t i) {
  return -3.0 + (double)((i * 7 + arg) % 25) * 0.25;
}
static double g_int(int arg, int64_t i) {
  return (double)((i * 5 + arg * 7) % 19 - 9);
}
/* Dividends in -9..9 and nonzero divisors in -4..4. */
static double g_division(int arg, int64_t i) {
  static const int d[] = {1, -1, 2, -2, 3, -3, 4, -4};
  return arg == 0 ? g_int(arg, i) : d[i % 8];
}
static double g_div_edges(int arg, int64_t i) {
  static const double lhs[] = {7, -7, INT32_MIN, INT32_MIN, 0, INT32_MAX};
  static const double rhs[] = {0, 0, -1, 1, 0, -1};
  return arg == 0 ? lhs[i % 6] : rhs[i % 6];
}
static double g_add_edges(int arg, int64_t i) {
  static const double lhs[] = {INT32_MAX, INT32_MIN, INT32_MAX, -1};
  static const double rhs[] = {1, -1, INT32_MAX, INT32_MIN};
  return arg == 0 ? lhs[i % 4] : rhs[i % 4];
}
static double g_halves(int arg, int64_t i) {
  (void)arg;
  static const double v[] = {0.5, 1.5, 2.5, -0.5, -2.5, 2.7, -2.7, 3.0};
  return v[i % 8];
}

/* Elementwise references, over n elements. */
#define CTS_UNARY_REF(fname, n, expr)                                         \
  static void fname(const double *const *in, double *out) {                   \
    for (int i = 0; i < (n); i++) {                                           \
      double x = in[0][i];                                                    \
      out[i] = (expr);                                                        \
    }                                                                         \
  }
#define CTS_BINARY_REF(fname, n, expr)                                        \
  static void fname(const double *const *in, double *out) {                   \
    for (int i = 0; i < (n); i++) {                                           \
      double x = in[0][i], y = in[1][i];                                      \
      out[i] = (expr);                                                        \
    }                                                                         \
  }

static double ref_logistic(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_sdiv(double x, double y) {
  int64_t a = (int64_t)x, b = (int64_t)y;
  if (b == 0) return -1;
  if (a == INT32_MIN && b == -1) return INT32_MIN;
  return (double)(a / b); /* C division truncates toward zero */
}
static double ref_srem(double x, double y) {
  int64_t a = (int64_t)x, b = (int64_t)y;
  if (b == 0) return (double)a;
  if (a == INT32_MIN && b == -1) return 0;
  return (double)(a % b); /* the sign of the dividend */
}
static double ref_wrap32(double v) {
  return (double)(int32_t)(uint32_t)(uint64_t)(int64_t)v;
}

CTS_UNARY_REF(ref_exp, 12, exp(x))
CTS_UNARY_REF(ref_log, 12, log(x))
CTS_UNARY_REF(ref_tanh, 12, tanh(x))
CTS_UNARY_REF(ref_sqrt, 12, sqrt(x))
CTS_UNARY_REF(ref_rsqrt, 12, 1.0 / sqrt(x))
CTS_UNARY_REF(ref_sine, 12, sin(x))
CTS_UNARY_REF(ref_cosine, 12, cos(x))
CTS_UNARY_REF(ref_logistic12, 12, ref_logistic(x))
CTS_UNARY_REF(ref_negate, 12, -x)
CTS_UNARY_REF(ref_abs, 12, fabs(x))
CTS_UNARY_REF(ref_floor, 8, floor(x))
CTS_UNARY_REF(ref_ceil, 8, ceil(x))
CTS_UNARY_REF(ref_round_even, 8, nearbyint(x))
CTS_UNARY_REF(ref_convert, 8, trunc(x))
CTS_BINARY_REF(ref_power, 12, pow(x, y))
CTS_BINARY_REF(ref_maximum, 12, x > y ? x : y)
CTS_BINARY_REF(ref_select, 12, x > y ? x : y * 2)
CTS_BINARY_REF(ref_sub, 12, x - y)
CTS_BINARY_REF(ref_div, 12, ref_sdiv(x, y))
CTS_BINARY_REF(ref_rem, 12, ref_srem(x, y))
CTS_BINARY_REF(ref_div_edges, 6, ref_sdiv(x, y))
CTS_BINARY_REF(ref_rem_edges, 6, ref_srem(x, y))
CTS_BINARY_REF(ref_add_wrap, 4, ref_wrap32(x + y))

/* [3x4] x [4x5] */
static void ref_matmul(const double *const *in, double *out) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 5; j++) {
      double s = 0;
      for (int k = 0; k < 4; k++) s += in[0][i * 4 + k] * in[1][k * 5 + j];
      out[i * 5 + j] = s;
    }
}
/* [2x3x4] x [2x4x2], batch 0 */
static void ref_batch_matmul(const double *const *in, double *out) {
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) {
        double s = 0;
        for (int k = 0; k < 4; k++)
          s += in[0][(b * 3 + i) * 4 + k] * in[1][(b * 4 + k) * 2 + j];
        out[(b * 3 + i) * 2 + j] = s;
      }
}
/* [4x6] summed over dimension 1 */
static void ref_row_sum(const double *const *in, double *out) {
  for (int i = 0; i < 4; i++) {
    out[i] = 0;
    for (int j = 0; j < 6; j++) out[i] += in[0][i * 6 + j];
  }
}
/* [4x6] max over dimension 0 */
static void ref_col_max(const double *const *in, double *out) {
  for (int j = 0; j < 6; j++) {
    out[j] = -INFINITY;
    for (int i = 0; i < 4; i++)
      if (in[0][i * 6 + j] > out[j]) out[j] = in[0][i * 6 + j];
  }
}
/* [3x4] summed to a scalar */
static void ref_total(const double *const *in, double *out) {
  out[0] = 0;
  for (int i = 0; i < 12; i++) out[0] += in[0][i];
}
/* [3] -> [4x3x2], dims = [1] */
static void ref_broadcast(const double *const *in, double *out) {
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 2; k++) out[(i * 3 + j) * 2 + k] = in[0][j];
}
/* [2x3x4] -> [4x2x3], dims = [2, 0, 1] */
static void ref_transpose(const double *const *in, double *out) {
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++)
      for (int k = 0; k < 3; k++)
        out[(i * 2 + j) * 3 + k] = in[0][(j * 3 + k) * 4 + i];
}
/* [2x3] ++ [2x2] along dimension 1 */
static void ref_concat(const double *const *in, double *out) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 5; j++)
      out[i * 5 + j] = j < 3 ? in[0][i * 3 + j] : in[1][i * 2 + j - 3];
}
/* [4x6][1:3, 0:6:2] */
static void ref_slice(const double *const *in, double *out) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) out[i * 3 + j] = in[0][(i + 1) * 6 + j * 2];
}
/* [2x3x4] -> [6x4]: the same elements in the same order */
static void ref_copy24(const double *const *in, double *out) {
  for (int i = 0; i < 24; i++) out[i] = in[0][i];
}
/* iota along dimension 1 of [2x3] */
static void ref_iota(const double *const *in, double *out) {
  (void)in;
  for (int i = 0; i < 6; i++) out[i] = i % 3;
}

#define CTS_UNARY_SRC(op, t, n)                                               \
  "func.func @main(%a: tensor<" n "x" t ">) -> tensor<" n "x" t "> {\n"       \
  "  %0 = stablehlo." op " %a : tensor<" n "x" t ">\n"                        \
  "  func.return %0 : tensor<" n "x" t ">\n}\n"
#define CTS_BINARY_SRC(op, t, n)                                              \
  "func.func @main(%a: tensor<" n "x" t ">, %b: tensor<" n "x" t ">) -> "     \
  "tensor<" n "x" t "> {\n"                                                   \
  "  %0 = stablehlo." op " %a, %b : tensor<" n "x" t ">\n"                    \
  "  func.return %0 : tensor<" n "x" t ">\n}\n"

#define CTS_ELEMENTWISE(nm, op, gen_, ref_, rt, at)                           \
  {nm, CTS_UNARY_SRC(op, "f32", "12"), XRT_F32, XRT_F32, 1, {1}, {{12}}, 1,  \
   {12}, gen_, ref_, rt, at}

static const cts_num cts_nums[] = {
    {"dot_general.f32",
     "func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> "
     "tensor<3x5xf32> {\n"
     "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
     "(tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>\n"
     "  func.return %0 : tensor<3x5xf32>\n}\n",
     XRT_F32, XRT_F32, 2, {2, 2}, {{3, 4}, {4, 5}}, 2, {3, 5}, g_small,
     ref_matmul, 1e-6, 1e-6},
    {"dot_general.batch.f32",
     "func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x2xf32>) -> "
     "tensor<2x3x2xf32> {\n"
     "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], "
     "contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x2xf32>) "
     "-> tensor<2x3x2xf32>\n"
     "  func.return %0 : tensor<2x3x2xf32>\n}\n",
     XRT_F32, XRT_F32, 2, {3, 3}, {{2, 3, 4}, {2, 4, 2}}, 3, {2, 3, 2},
     g_small, ref_batch_matmul, 1e-6, 1e-6},
    {"reduce.sum.f32",
     "func.func @main(%a: tensor<4x6xf32>) -> tensor<4xf32> {\n"
     "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across "
     "dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>\n"
     "  func.return %0 : tensor<4xf32>\n}\n",
     XRT_F32, XRT_F32, 1, {2}, {{4, 6}}, 1, {4}, g_small, ref_row_sum, 1e-6,
     1e-6},
    {"reduce.max.f32",
     "func.func @main(%a: tensor<4x6xf32>) -> tensor<6xf32> {\n"
     "  %z = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
     "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.maximum across "
     "dimensions = [0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<6xf32>\n"
     "  func.return %0 : tensor<6xf32>\n}\n",
     XRT_F32, XRT_F32, 1, {2}, {{4, 6}}, 1, {6}, g_small, ref_col_max, -1, 0},
    {"reduce.all.f32",
     "func.func @main(%a: tensor<3x4xf32>) -> tensor<f32> {\n"
     "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
     "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across "
     "dimensions = [0, 1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<f32>\n"
     "  func.return %0 : tensor<f32>\n}\n",
     XRT_F32, XRT_F32, 1, {2}, {{3, 4}}, 0, {0}, g_positive, ref_total, 1e-6,
     1e-6},
    {"broadcast_in_dim.f32",
     "func.func @main(%a: tensor<3xf32>) -> tensor<4x3x2xf32> {\n"
     "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> "
     "tensor<4x3x2xf32>\n"
     "  func.return %0 : tensor<4x3x2xf32>\n}\n",
     XRT_F32, XRT_F32, 1, {1}, {{3}}, 3, {4, 3, 2}, g_small, ref_broadcast, -1,
     0},
    {"transpose.f32",
     "func.func @main(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {\n"
     "  %0 = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<2x3x4xf32>) "
     "-> tensor<4x2x3xf32>\n"
     "  func.return %0 : tensor<4x2x3xf32>\n}\n",
     XRT_F32, XRT_F32, 1, {3}, {{2, 3, 4}}, 3, {4, 2, 3}, g_angle,
     ref_transpose, -1, 0},
    {"reshape.f32",
     "func.func @main(%a: tensor<2x3x4xf32>) -> tensor<6x4xf32> {\n"
     "  %0 = stablehlo.reshape %a : (tensor<2x3x4xf32>) -> tensor<6x4xf32>\n"
     "  func.return %0 : tensor<6x4xf32>\n}\n",
     XRT_F32, XRT_F32, 1, {3}, {{2, 3, 4}}, 2, {6, 4}, g_angle, ref_copy24, -1,
     0},
    {"concatenate.f32",
     "func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> "
     "tensor<2x5xf32> {\n"
     "  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, "
     "tensor<2x2xf32>) -> tensor<2x5xf32>\n"
     "  func.return %0 : tensor<2x5xf32>\n}\n",
     XRT_F32, XRT_F32, 2, {2, 2}, {{2, 3}, {2, 2}}, 2, {2, 5}, g_small,
     ref_concat, -1, 0},
    {"slice.f32",
     "func.func @main(%a: tensor<4x6xf32>) -> tensor<2x3xf32> {\n"
     "  %0 = stablehlo.slice %a [1:3, 0:6:2] : (tensor<4x6xf32>) -> "
     "tensor<2x3xf32>\n"
     "  func.return %0 : tensor<2x3xf32>\n}\n",
     XRT_F32, XRT_F32, 1, {2}, {{4, 6}}, 2, {2, 3}, g_angle, ref_slice, -1, 0},
    {"iota.s32",
     "func.func @main() -> tensor<2x3xi32> {\n"
     "  %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>\n"
     "  func.return %0 : tensor<2x3xi32>\n}\n",
     XRT_S32, XRT_S32, 0, {0}, {{0}}, 2, {2, 3}, g_int, ref_iota, -1, 0},
    CTS_ELEMENTWISE("exponential.f32", "exponential", g_angle, ref_exp, 1e-5,
                    1e-6),
    CTS_ELEMENTWISE("log.f32", "log", g_positive, ref_log, 1e-5, 1e-6),
    CTS_ELEMENTWISE("tanh.f32", "tanh", g_angle, ref_tanh, 1e-5, 1e-6),
    CTS_ELEMENTWISE("sqrt.f32", "sqrt", g_positive, ref_sqrt, 1e-6, 0),
    CTS_ELEMENTWISE("rsqrt.f32", "rsqrt", g_positive, ref_rsqrt, 1e-5, 0),
    CTS_ELEMENTWISE("sine.f32", "sine", g_angle, ref_sine, 1e-5, 1e-6),
    CTS_ELEMENTWISE("cosine.f32", "cosine", g_angle, ref_cosine, 1e-5, 1e-6),
    CTS_ELEMENTWISE("logistic.f32", "logistic", g_angle, ref_logistic12, 1e-5,
                    1e-6),
    CTS_ELEMENTWISE("negate.f32", "negate", g_small, ref_negate, -1, 0),
    {"abs.s32", CTS_UNARY_SRC("abs", "i32", "12"), XRT_S32, XRT_S32, 1, {1},
     {{12}}, 1, {12}, g_int, ref_abs, -1, 0},
    {"power.f32", CTS_BINARY_SRC("power", "f32", "12"), XRT_F32, XRT_F32, 2,
     {1, 1}, {{12}, {12}}, 1, {12}, g_positive, ref_power, 1e-5, 1e-6},
    {"maximum.f32", CTS_BINARY_SRC("maximum", "f32", "12"), XRT_F32, XRT_F32,
     2, {1, 1}, {{12}, {12}}, 1, {12}, g_small, ref_maximum, -1, 0},
    {"subtract.s32", CTS_BINARY_SRC("subtract", "i32", "12"), XRT_S32,
     XRT_S32, 2, {1, 1}, {{12}, {12}}, 1, {12}, g_int, ref_sub, -1, 0},
    {"add.s32.wraparound", CTS_BINARY_SRC("add", "i32", "4"), XRT_S32,
     XRT_S32, 2, {1, 1}, {{4}, {4}}, 1, {4}, g_add_edges, ref_add_wrap, -1, 0},
    {"divide.s32", CTS_BINARY_SRC("divide", "i32", "12"), XRT_S32, XRT_S32, 2,
     {1, 1}, {{12}, {12}}, 1, {12}, g_division, ref_div, -1, 0},
    {"remainder.s32", CTS_BINARY_SRC("remainder", "i32", "12"), XRT_S32,
     XRT_S32, 2, {1, 1}, {{12}, {12}}, 1, {12}, g_division, ref_rem, -1, 0},
    {"divide.s32.xla_edges", CTS_BINARY_SRC("divide", "i32", "6"), XRT_S32,
     XRT_S32, 2, {1, 1}, {{6}, {6}}, 1, {6}, g_div_edges, ref_div_edges, -1,
     0},
    {"remainder.s32.xla_edges", CTS_BINARY_SRC("remainder", "i32", "6"),
     XRT_S32, XRT_S32, 2, {1, 1}, {{6}, {6}}, 1, {6}, g_div_edges,
     ref_rem_edges, -1, 0},
    {"floor.f32", CTS_UNARY_SRC("floor", "f32", "8"), XRT_F32, XRT_F32, 1, {1},
     {{8}}, 1, {8}, g_halves, ref_floor, -1, 0},
    {"ceil.f32", CTS_UNARY_SRC("ceil", "f32", "8"), XRT_F32, XRT_F32, 1, {1},
     {{8}}, 1, {8}, g_halves, ref_ceil, -1, 0},
    {"round_nearest_even.f32", CTS_UNARY_SRC("round_nearest_even", "f32", "8"),
     XRT_F32, XRT_F32, 1, {1}, {{8}}, 1, {8}, g_halves, ref_round_even, -1, 0},
    {"convert.f32_to_s32",
     "func.func @main(%a: tensor<8xf32>) -> tensor<8xi32> {\n"
     "  %0 = stablehlo.convert %a : (tensor<8xf32>) -> tensor<8xi32>\n"
     "  func.return %0 : tensor<8xi32>\n}\n",
     XRT_F32, XRT_S32, 1, {1}, {{8}}, 1, {8}, g_halves, ref_convert, -1, 0},
    {"compare_select.f32",
     "func.func @main(%a: tensor<12xf32>, %b: tensor<12xf32>) -> "
     "tensor<12xf32> {\n"
     "  %c = stablehlo.compare GT, %a, %b : (tensor<12xf32>, tensor<12xf32>) "
     "-> tensor<12xi1>\n"
     "  %d = stablehlo.add %b, %b : tensor<12xf32>\n"
     "  %0 = stablehlo.select %c, %a, %d : tensor<12xi1>, tensor<12xf32>\n"
     "  func.return %0 : tensor<12xf32>\n}\n",
     XRT_F32, XRT_F32, 2, {1, 1}, {{12}, {12}}, 1, {12}, g_small, ref_select,
     -1, 0},
};

/* Runs one numerics case: inputs from gen, compared against ref. */
static cts_result t_numerics(cts *t, xrt_client *c, const void *arg) {
  const cts_num *k = arg;
  cts_result r = CTS_PASS;
  void *in[3] = {NULL, NULL, NULL};
  double *din[3] = {NULL, NULL, NULL}, *want = NULL;
  xrt_shape shapes[3];
  for (int a = 0; a < k->nin; a++) {
    shapes[a] = cts_shape(k->in_dt, k->in_rank[a], k->in_dims[a]);
    int64_t n = xrt_shape_numel(&shapes[a]);
    in[a] = calloc((size_t)n + 1, 8);
    din[a] = calloc((size_t)n + 1, sizeof(double));
    CTS_CHECK(in[a] && din[a], "out of host memory");
    for (int64_t i = 0; i < n; i++) {
      double v = k->gen(a, i);
      cts_put(k->in_dt, in[a], i, v);
      din[a][i] = cts_get(k->in_dt, in[a], i); /* as stored */
    }
  }
  xrt_shape out = cts_shape(k->out_dt, k->out_rank, k->out_dims);
  want = calloc((size_t)xrt_shape_numel(&out) + 1, sizeof *want);
  CTS_CHECK(want, "out of host memory");
  k->ref((const double *const *)din, want);
  char file[96];
  snprintf(file, sizeof file, "%s.mlir", k->name);
  cts_run run = {.file = file, .src = k->src, .nin = k->nin, .in = shapes,
                 .in_data = in, .out = out, .want = want, .rtol = k->rtol,
                 .atol = k->atol};
  r = cts_run_program(t, c, &run);
done:
  for (int a = 0; a < 3; a++) free(in[a]), free(din[a]);
  free(want);
  return r;
}

/* ======================================================================
 * 11. main
 * ==================================================================== */

#define CTS_F32 {XRT_F32, XRT_DTYPE_INVALID}
#define CTS_MULTI (XRT_CAP_MULTI_DEVICE)
#define CTS_COLL (XRT_CAP_MULTI_DEVICE | XRT_CAP_COLLECTIVES)

/* The tests under fixed names, in the order they run (the per-type ones
 * are added between them by cts_register_all). */
static const cts_case cts_basic_cases[] = {
    {"basic.info", t_basic_info, NULL, {.own_clients = true}},
    {"basic.load_again", t_basic_load_again, NULL, {.own_clients = true}},
    {"basic.client", t_basic_client, NULL, {.own_clients = true}},
    {"basic.devices", t_basic_devices, NULL, {0}},
    {"basic.topology", t_basic_topology, NULL, {.own_clients = true}},
    {"basic.exclusive", t_basic_exclusive, NULL,
     {.caps = XRT_CAP_EXCLUSIVE, .own_clients = true}},
};

static const cts_case cts_buffer_compile_cases[] = {
    {"buffers.copy_device", t_buffers_copy_device, NULL, {0}},
    {"buffers.async", t_buffers_async, NULL, {0}},
    {"buffers.release", t_buffers_release, NULL, {0}},
    {"buffers.bad_input", t_buffers_bad_input, NULL, {0}},
    {"compile.type_error", t_compile_error, &cts_type_error, {0}},
    {"compile.syntax_error", t_compile_error, &cts_syntax_error, {0}},
    {"compile.query_support", t_compile_query_support, NULL, {0}},
    {"compile.stablehlo_version", t_compile_version, NULL, {0}},
};

static const cts_case cts_late_cases[] = {
    {"execute.edge_shapes", t_execute_edge_shapes, NULL, {.dt = CTS_F32}},
    {"execute.async_events", t_execute_async, NULL, {.dt = CTS_F32}},
    {"execute.bad_args", t_execute_bad_args, NULL, {0}},
    {"execute.released_executable", t_execute_released, NULL, {0}},
    {"multi.execute_multi", t_replicated, &cts_multi_execute,
     {.caps = CTS_MULTI, .dt = CTS_F32}},
    {"collectives.all_reduce", t_replicated, &cts_all_reduce,
     {.caps = CTS_COLL, .dt = CTS_F32}},
    {"collectives.all_gather", t_replicated, &cts_all_gather,
     {.caps = CTS_COLL, .dt = CTS_F32}},
    {"collectives.collective_permute", t_replicated, &cts_permute,
     {.caps = CTS_COLL, .dt = CTS_F32}},
    {"faults.execute", t_faults_execute, NULL,
     {.caps = XRT_CAP_FAULT_INJECTION, .dt = CTS_F32}},
    {"faults.transfer", t_faults_transfer, NULL,
     {.caps = XRT_CAP_FAULT_INJECTION, .dt = CTS_F32}},
};

static void cts_register_all(cts *t) {
  char name[80];
  cts_add_cases(t, cts_basic_cases, CTS_COUNT(cts_basic_cases));
  for (int d = 1; d < XRT_DTYPE_COUNT; d++) {
    snprintf(name, sizeof name, "buffers.roundtrip.%s", cts_dtype_names[d]);
    cts_add(t, name, t_buffers_roundtrip, (const void *)(intptr_t)d,
            (cts_needs){.dt = {(xrt_dtype)d}});
  }
  cts_add_cases(t, cts_buffer_compile_cases,
                CTS_COUNT(cts_buffer_compile_cases));
  for (int i = 0; i < CTS_COUNT(cts_binops); i++) {
    snprintf(name, sizeof name, "execute.%s.%s", cts_binops[i].op,
             cts_dtype_names[cts_binops[i].dt]);
    cts_add(t, name, t_execute_binop, &cts_binops[i],
            (cts_needs){.dt = {cts_binops[i].dt}});
  }
  cts_add_cases(t, cts_late_cases, CTS_COUNT(cts_late_cases));
  for (int i = 0; i < CTS_COUNT(cts_nums); i++) {
    const cts_num *k = &cts_nums[i];
    snprintf(name, sizeof name, "numerics.%s", k->name);
    /* every input has in_dt; a program without inputs needs only out_dt */
    cts_add(t, name, t_numerics, k,
            (cts_needs){.dt = {k->nin ? k->in_dt : k->out_dt, k->out_dt}});
  }
}

/* Runs one test: SKIP for what it needs and the plugin lacks, then the
 * body on a client of its own (released after it, with all it holds). */
static cts_result cts_run_test(cts *t, const cts_test *e) {
  xrt_client *c = NULL;
  cts_result r = cts_need_caps(t, e->needs.caps);
  for (int i = 0; i < CTS_COUNT(e->needs.dt) && r == CTS_PASS; i++)
    if (e->needs.dt[i] != XRT_DTYPE_INVALID)
      r = cts_need_dtype(t, e->needs.dt[i]);
  if (r == CTS_PASS && !e->needs.own_clients) r = cts_client(t, &c);
  if (r == CTS_PASS) r = e->fn(t, c, e->arg);
  xrt_client_release(c);
  return r;
}

/* Chooses the element type of the generic tests and the StableHLO version
 * programs state (xrt's own when the plugin accepts it). */
static void cts_configure(cts *t) {
  static const xrt_dtype pref[] = {XRT_F32, XRT_S32, XRT_F64, XRT_S64};
  t->dt = XRT_DTYPE_INVALID;
  for (int i = 0; i < CTS_COUNT(pref) && !t->dt; i++)
    if (cts_has_dtype(t, pref[i])) t->dt = pref[i];
  for (int d = 1; d < XRT_DTYPE_COUNT && !t->dt; d++)
    if (cts_has_dtype(t, (xrt_dtype)d)) t->dt = (xrt_dtype)d;
  if (!t->dt) t->dt = XRT_F32;
  long lo, hi, ours;
  t->prefix[0] = 0;
  if (cts_parse_version(t->info.stablehlo_min, &lo) &&
      cts_parse_version(t->info.stablehlo_max, &hi) &&
      cts_parse_version(xrt_stablehlo_version(), &ours) &&
      (ours < lo || ours > hi))
    snprintf(t->prefix, sizeof t->prefix,
             "module attributes {stablehlo.version = \"%s\"} { ",
             t->info.stablehlo_max);
}

/* Loads the plugin into a fresh context: the first test, which every
 * other one needs. */
static cts_result cts_load(cts *t) {
  xrt_context_options o;
  xrt_context_options_init(&o);
  o.builtin_plugins = false;
  o.env_plugins = false;
  xrt_status s = xrt_context_create(&o, &t->ctx);
  if (s) return cts_fail_status(t, "xrt_context_create", s);
  if (xrt_context_plugin_count(t->ctx) != 0)
    return cts_fail(t, "a context without built-in or XRT_PLUGINS plugins "
                    "holds %d", xrt_context_plugin_count(t->ctx));
  s = xrt_context_load_plugin(t->ctx, NULL, t->path, &t->plugin);
  if (s) return cts_fail_status(t, "xrt_context_load_plugin", s);
  if (!t->plugin) return cts_fail(t, "the load returned no plugin");
  s = xrt_plugin_get_info(t->plugin, &t->info);
  if (s) return cts_fail_status(t, "xrt_plugin_get_info", s);
  if (!t->info.name || !*t->info.name)
    return cts_fail(t, "the plugin has no registration name");
  return CTS_PASS;
}

static void cts_report(const char *name, cts_result r, const char *why,
                       int *counts) {
  counts[r]++;
  if (r == CTS_PASS) printf("PASS %s\n", name);
  else printf("%s %s: %s\n", r == CTS_FAIL ? "FAIL" : "SKIP", name, why);
  fflush(stdout);
}

static int cts_usage(const char *msg) {
  if (msg) fprintf(stderr, "xrt-cts: %s\n", msg);
  fprintf(stderr, "usage: xrt-cts PLUGIN.so [--filter SUBSTR] "
                  "[--devices N]\n");
  return 2;
}

int main(int argc, char **argv) {
  cts t;
  memset(&t, 0, sizeof t);
  t.want_devices = 4;
  const char *filter = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
      return cts_usage(NULL) - 2;
    if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
      char *end;
      long n = strtol(argv[++i], &end, 10);
      if (*end || n < 1 || n > CTS_MAX_REPLICAS)
        return cts_usage("--devices takes a number from 1 to 64");
      t.want_devices = (int)n;
    } else if (argv[i][0] == '-' || t.path) {
      fprintf(stderr, "xrt-cts: unexpected argument '%s'\n", argv[i]);
      return cts_usage(NULL);
    } else {
      t.path = argv[i];
    }
  }
  if (!t.path) return cts_usage("no plugin given");

  int counts[3] = {0, 0, 0};
  cts_result r = cts_load(&t);
  if (r != CTS_PASS || !filter || strstr("basic.load", filter))
    cts_report("basic.load", r, t.why, counts);
  if (r == CTS_PASS) {
    cts_configure(&t);
    cts_register_all(&t);
    for (int i = 0; i < t.ntests; i++) {
      if (filter && !strstr(t.tests[i].name, filter)) continue;
      t.why[0] = 0;
      r = cts_run_test(&t, &t.tests[i]);
      cts_report(t.tests[i].name, r, t.why, counts);
    }
  }
  printf("xrt-cts: %d passed, %d failed, %d skipped\n", counts[CTS_PASS],
         counts[CTS_FAIL], counts[CTS_SKIP]);
  free(t.tests);
  if (t.ctx && xrt_context_release(t.ctx) != XRT_OK) {
    fprintf(stderr, "xrt-cts: xrt_context_release: %s\n", xrt_last_error());
    return 1;
  }
  return counts[CTS_FAIL] ? 1 : 0;
}
