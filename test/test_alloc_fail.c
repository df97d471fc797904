/*
 * test_alloc_fail.c - allocation-failure injection, as SQLite tests it.
 *
 * A client is given a counting allocator (test_util.h) that fails its Nth
 * allocation.  A representative workflow runs for N = 1, 2, ... until it
 * completes without reaching N: create a 4-device client, register a host
 * function, compile a program with a collective over the 4 devices (twice:
 * the second is a compile-cache hit), upload to every device, run it with
 * xrt_execute_multi, run a single-device program asynchronously (upload,
 * execute, download with events and an on-ready callback), run the
 * collective through a pmap on a sharded array, create a sharded variable
 * and reshard it, and read everything back.
 *
 * At every N each call must succeed or fail with XRT_RESOURCE_EXHAUSTED
 * and a message naming the memory, results that succeed must be right, a
 * failed reshard must leave the variable as it was (reshards are atomic),
 * and after the cleanup the allocator must hold no block (no leak).  The
 * walk runs twice: failing the Nth allocation only, and (SQLite's
 * persistent mode) the Nth and every later one, so that error and cleanup
 * paths that would need memory themselves show up.  ASan (make SAN=1)
 * checks the rest: no use after free, no crash.
 */
#define _GNU_SOURCE /* dladdr: where an unexpected failure happened */
#include <dlfcn.h>

#include "test_util.h"

#define NDEV 4

/* The collective: every device's x summed over the 4 devices, then doubled
 * by the host function (a custom call on every participant). */
static const char *kCollective =
    "module @coll attributes {mhlo.num_replicas = 4 : i32} {\n"
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %r = \"stablehlo.all_reduce\"(%x) ({\n"
    "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "      %s = stablehlo.add %a, %b : tensor<f32>\n"
    "      stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "    : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %d = stablehlo.custom_call @twice(%r) : (tensor<4xf32>) -> "
    "tensor<4xf32>\n"
    "  return %d : tensor<4xf32>\n"
    "}\n}\n";

/* A loop on one device: x doubled 3 times, then doubled by the host. */
static const char *kLoop =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %three = stablehlo.constant dense<3> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, "
    "tensor<4xf32>\n"
    "  cond {\n"
    "    %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) "
    "-> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  } do {\n"
    "    %n = stablehlo.add %i, %one : tensor<i32>\n"
    "    %d = stablehlo.add %acc, %acc : tensor<4xf32>\n"
    "    stablehlo.return %n, %d : tensor<i32>, tensor<4xf32>\n"
    "  }\n"
    "  %s = stablehlo.custom_call @twice(%r#1) : (tensor<4xf32>) -> "
    "tensor<4xf32>\n"
    "  func.return %s : tensor<4xf32>\n"
    "}\n";

static xrt_status twice(void *user, xrt_host_call *call) {
  (void)user;
  const float *in = (const float *)call->inputs[0].data;
  float *out = (float *)call->outputs[0].data;
  for (int i = 0; i < 4; i++) out[i] = 2 * in[i];
  return XRT_OK;
}

static void on_ready(void *user, xrt_status status, const char *message) {
  (void)status;
  (void)message;
  atomic_fetch_add((_Atomic int *)user, 1);
}

/* One run of the workflow, with its allocator and what it has made. */
typedef struct run {
  tu_counting_alloc a;
  long n;            /* fail_at */
  xrt_client *c;
  xrt_device *dev[NDEV];
  bool ok;           /* every step so far succeeded */
  int steps;         /* steps that succeeded */
  const char *where; /* the step that failed */
  _Atomic int callbacks; /* on_ready calls */
  bool callback_set;     /* xrt_event_on_ready succeeded */
} run;

/* Where an address is, for messages: "file+0xoffset" (addr2line -f -e
 * file offset names the function). */
static void site_name(const void *pc, char *buf, size_t cap) {
  Dl_info info;
  if (pc && dladdr(pc, &info) && info.dli_fname)
    snprintf(buf, cap, "%s+%#lx", info.dli_fname,
             (unsigned long)((const char *)pc - (const char *)info.dli_fbase));
  else
    snprintf(buf, cap, "%p", pc);
}

/* Accepts success, or the injected failure reported as such with a message
 * about memory; anything else fails the test naming N and the call.  True
 * while every step has succeeded. */
static bool step(run *r, xrt_status s, const char *call) {
  if (s == XRT_OK) {
    r->steps += r->ok;
    return r->ok;
  }
  char site[256];
  site_name(atomic_load(&r->a.fail_site), site, sizeof site);
  if (s != XRT_RESOURCE_EXHAUSTED || !atomic_load(&r->a.failed))
    fail_msg("N=%ld: %s returned %s (%s); injected failure %s at %s", r->n,
             call, xrt_strerror(s), xrt_last_error(),
             atomic_load(&r->a.failed) ? "happened" : "did not happen", site);
  const char *msg = xrt_last_error();
  if (!strstr(msg, "memory") && !strstr(msg, "allocate"))
    fail_msg("N=%ld: %s: RESOURCE_EXHAUSTED without naming the memory: '%s'"
             " (failure at %s)", r->n, call, msg, site);
  if (r->ok) r->where = call;
  r->ok = false;
  return false;
}

static void expect_floats(const run *r, const char *what, const float *got,
                          const float *want, int n) {
  for (int i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("N=%ld: %s[%d] is %g, expected %g", r->n, what, i,
               (double)got[i], (double)want[i]);
}

/* ---- the steps ---- */

static void client_step(run *r) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = NDEV;
  o.threads_per_device = 1;
  o.device_memory_bytes = (uint64_t)1 << 24;
  o.allocator = tu_counting_allocator(&r->a);
  if (!step(r, xrt_client_create(&o, &r->c), "xrt_client_create")) return;
  for (int d = 0; d < NDEV; d++) r->dev[d] = xrt_client_device(r->c, d);
  step(r, xrt_client_register_host_function(r->c, "twice", twice, NULL),
       "xrt_client_register_host_function");
}

/* Compiles the collective twice (the second time from the cache). */
static void compile_step(run *r, xrt_executable **e1, xrt_executable **e2) {
  size_t len = strlen(kCollective);
  if (!step(r, xrt_compile(r->c, kCollective, len, NULL, e1), "xrt_compile"))
    return;
  if (!step(r, xrt_compile(r->c, kCollective, len, NULL, e2),
            "xrt_compile (again)"))
    return;
  if (xrt_executable_num_replicas(*e2) != NDEV)
    fail_msg("N=%ld: the cached executable has %d replicas", r->n,
             xrt_executable_num_replicas(*e2));
}

/* Uploads x[d] to device d, runs e on all 4 with xrt_execute_multi and
 * checks every device's result. */
static void multi_step(run *r, xrt_executable *e) {
  float x[NDEV][4];
  xrt_buffer *in[NDEV][1] = {{NULL}}, *out[NDEV][1] = {{NULL}};
  xrt_shape sh = TU_SHAPE(XRT_F32, 4);
  for (int d = 0; d < NDEV; d++)
    for (int i = 0; i < 4; i++) x[d][i] = (float)(10 * d + i);
  for (int d = 0; d < NDEV; d++)
    step(r, xrt_buffer_from_host(r->c, r->dev[d], &sh, x[d], &in[d][0]),
         "xrt_buffer_from_host");
  xrt_buffer *const *lists[NDEV] = {in[0], in[1], in[2], in[3]};
  xrt_buffer **olists[NDEV] = {out[0], out[1], out[2], out[3]};
  xrt_event *done = NULL;
  if (r->ok &&
      step(r, xrt_execute_multi(e, lists, NDEV, 1, olists, 1, NULL, &done),
           "xrt_execute_multi") &&
      step(r, xrt_event_await(done), "xrt_execute_multi (await)")) {
    float want[4], got[4];
    for (int i = 0; i < 4; i++) {
      float sum = 0;
      for (int d = 0; d < NDEV; d++) sum += x[d][i];
      want[i] = 2 * sum;
    }
    for (int d = 0; d < NDEV; d++)
      if (step(r, xrt_buffer_to_host(out[d][0], got, sizeof got),
               "xrt_buffer_to_host"))
        expect_floats(r, "execute_multi output", got, want, 4);
  }
  xrt_event_release(done);
  for (int d = 0; d < NDEV; d++) {
    xrt_buffer_release(in[d][0]);
    xrt_buffer_release(out[d][0]);
  }
}

/* The loop program on device 1, asynchronously: upload, execute and
 * download are queued back to back, an on-ready callback counts. */
static void async_step(run *r) {
  xrt_executable *e = NULL;
  xrt_buffer *in = NULL, *out = NULL;
  xrt_event *up = NULL, *ran = NULL, *down = NULL;
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  xrt_shape sh = TU_SHAPE(XRT_F32, 4);
  xrt_device *d = r->dev[1];
  bool ok = step(r, xrt_compile(r->c, kLoop, strlen(kLoop), NULL, &e),
                 "xrt_compile (loop)") &&
            step(r, xrt_buffer_from_host_async(r->c, d, &sh, x, &in, &up),
                 "xrt_buffer_from_host_async") &&
            step(r, xrt_execute_async(e, d, &in, 1, &out, 1, NULL, &ran),
                 "xrt_execute_async") &&
            (r->callback_set = step(r, xrt_event_on_ready(ran, on_ready,
                                                          &r->callbacks),
                                    "xrt_event_on_ready")) &&
            step(r, xrt_buffer_to_host_async(out, y, sizeof y, &down),
                 "xrt_buffer_to_host_async");
  /* Every event is awaited, whatever failed, so nothing runs on after. */
  xrt_status su = up ? xrt_event_await(up) : XRT_OK;
  xrt_status sr = ran ? xrt_event_await(ran) : XRT_OK;
  xrt_status sd = down ? xrt_event_await(down) : XRT_OK;
  if (ok && step(r, su, "xrt_buffer_from_host_async (await)") &&
      step(r, sr, "xrt_execute_async (await)") &&
      step(r, sd, "xrt_buffer_to_host_async (await)")) {
    float want[4];
    for (int i = 0; i < 4; i++) want[i] = 16 * x[i];
    expect_floats(r, "async output", y, want, 4);
  }
  xrt_event_release(up);
  xrt_event_release(ran);
  xrt_event_release(down);
  xrt_buffer_release(in);
  xrt_buffer_release(out);
  xrt_executable_release(e);
}

/* The collective through a pmap on a 16-element array chunked over the 4
 * devices; the output stacks the devices' results. */
static void pmap_step(run *r) {
  float x[16], got[NDEV * 4];
  for (int i = 0; i < 16; i++) x[i] = (float)(i * i % 7) - 2.5f;
  xrt_shape logical = TU_SHAPE(XRT_F32, 16);
  xrt_sharding_spec spec = tu_spec_chunked(1, 0, NDEV);
  xrt_sharded_array *arr = NULL, *out = NULL;
  xrt_pmap *p = NULL;
  xrt_event *done = NULL;
  xrt_pmap_options o;
  xrt_pmap_options_init(&o);
  o.text = kCollective;
  o.len = strlen(kCollective);
  if (step(r, xrt_sharded_array_from_host(r->c, &logical, x, &spec, r->dev,
                                          NDEV, &arr),
           "xrt_sharded_array_from_host") &&
      step(r, xrt_pmap_create(r->c, &o, &p), "xrt_pmap_create") &&
      step(r, xrt_pmap_call(p, &arr, 1, &out, 1, NULL, &done),
           "xrt_pmap_call") &&
      step(r, xrt_event_await(done), "xrt_pmap_call (await)") &&
      step(r, xrt_sharded_array_to_host(out, got, sizeof got),
           "xrt_sharded_array_to_host")) {
    float want[NDEV * 4];
    for (int i = 0; i < 4; i++) {
      float sum = 0;
      for (int d = 0; d < NDEV; d++) sum += x[4 * d + i];
      for (int d = 0; d < NDEV; d++) want[4 * d + i] = 2 * sum;
    }
    expect_floats(r, "pmap output", got, want, NDEV * 4);
  }
  xrt_event_release(done);
  xrt_sharded_array_release(out);
  xrt_sharded_array_release(arr);
  xrt_pmap_release(p);
}

/* A 8x4 variable chunked by rows over devices 0..3, resharded to columns
 * over devices 3..0: afterwards it holds the same values, in the new
 * format if the reshard succeeded and in the old one if it failed. */
static void variable_step(run *r) {
  float w[32], got[32];
  for (int i = 0; i < 32; i++) w[i] = (float)(3 * i) - 40.0f;
  xrt_shape logical = TU_SHAPE(XRT_F32, 8, 4);
  xrt_sharding_spec rows = tu_spec_chunked(2, 0, NDEV);
  xrt_sharding_spec cols = tu_spec_chunked(2, 1, NDEV);
  xrt_device *rev[NDEV] = {r->dev[3], r->dev[2], r->dev[1], r->dev[0]};
  xrt_variable_format from = {&rows, r->dev, NDEV}, to = {&cols, rev, NDEV};
  xrt_variable *v = NULL;
  if (!step(r, xrt_variable_create(r->c, "w", &logical, w, &from, &v),
            "xrt_variable_create"))
    return;
  uint64_t before = xrt_variable_format_key(v);
  xrt_status s = xrt_variables_reshard(&v, &to, 1, NULL);
  uint64_t want_key = s == XRT_OK ? xrt_variable_format_key_of(&logical, &to)
                                  : before;
  if (xrt_variable_format_key(v) != want_key)
    fail_msg("N=%ld: after a reshard that returned %s the variable's format "
             "is neither the old nor the new one", r->n, xrt_strerror(s));
  /* Read back even after a failed reshard: the variable must be intact
   * (unless reading needs memory that is not there). */
  xrt_status rs = xrt_variable_to_host(v, got, sizeof got);
  if (rs == XRT_OK) expect_floats(r, "variable after reshard", got, w, 32);
  step(r, s, "xrt_variables_reshard");
  step(r, rs, "xrt_variable_to_host");
  step(r, xrt_variable_release(v), "xrt_variable_release");
}

/* Asks the client whether it runs the loop program (parsed apart, with
 * the system allocator: a program has no client); it does. */
static void support_step(run *r) {
  xrt_program *p = NULL;
  xrt_support_report *rep = NULL;
  if (xrt_program_parse(kLoop, strlen(kLoop), NULL, &p) != XRT_OK)
    fail_msg("xrt_program_parse: %s", xrt_last_error());
  if (step(r, xrt_client_query_support(r->c, p, NULL, &rep),
           "xrt_client_query_support") &&
      xrt_support_report_verdict(rep) != XRT_SUPPORT_YES)
    fail_msg("N=%ld: the loop program is reported unsupported", r->n);
  xrt_support_report_release(rep);
  xrt_program_release(p);
}

/* Runs the workflow with fail_at n (persistent: every allocation from the
 * nth on fails); true when every step succeeded. */
static bool workflow(run *r, long n, bool persistent) {
  memset(r, 0, sizeof *r);
  atomic_init(&r->callbacks, 0);
  tu_counting_init(&r->a, n);
  r->a.persistent = persistent;
  r->n = n;
  r->ok = true;
  xrt_executable *e1 = NULL, *e2 = NULL;
  client_step(r);
  if (r->ok) compile_step(r, &e1, &e2);
  if (r->ok) multi_step(r, e2);
  if (r->ok) async_step(r);
  if (r->ok) pmap_step(r);
  if (r->ok) variable_step(r);
  if (r->ok) support_step(r);
  if (r->ok && !atomic_load(&r->a.failed)) {
    xrt_cache_stats cs;
    assert_int_equal(xrt_client_get_cache_stats(r->c, &cs), XRT_OK);
    if (cs.hits < 1)
      fail_msg("the second compile of the collective missed the cache");
  }
  xrt_executable_release(e1);
  xrt_executable_release(e2);
  xrt_client_release(r->c); /* anything left too, after queued work */
  /* The callback runs on a runtime thread, at the latest before the
   * client's release returns. */
  if (atomic_load(&r->callbacks) != (r->callback_set ? 1 : 0))
    fail_msg("N=%ld: the on-ready callback ran %d times (registered: %d)",
             n, atomic_load(&r->callbacks), (int)r->callback_set);
  long live = atomic_load(&r->a.live);
  long long bytes = atomic_load(&r->a.live_bytes);
  if (live || bytes)
    fail_msg("N=%ld (failed in %s): %ld block(s), %lld byte(s) leaked", n,
             r->where ? r->where : "nothing", live, bytes);
  return r->ok;
}

/* Distinct failure sites seen, for the coverage summary. */
#define MAX_SITES 1024

/* Walks N = 1, 2, ... until the workflow completes; prints the coverage. */
static void walk(bool persistent) {
  static const void *sites[MAX_SITES];
  int nsites = 0;
  static run r;
  long n;
  /* XRT_ALLOC_FROM=N starts the walk at N and XRT_ALLOC_VERBOSE prints
   * each run (both to debug one failure). */
  const char *from = getenv("XRT_ALLOC_FROM");
  bool verbose = getenv("XRT_ALLOC_VERBOSE") != NULL;
  for (n = from ? atol(from) : 1; n < 100000; n++) {
    if (verbose) print_message("N=%ld\n", n);
    bool ok = workflow(&r, n, persistent);
    if (ok && !atomic_load(&r.a.failed)) break; /* past the last one */
    const void *pc = atomic_load(&r.a.fail_site);
    bool seen = false;
    for (int i = 0; i < nsites && !seen; i++) seen = sites[i] == pc;
    if (!seen && nsites < MAX_SITES) sites[nsites++] = pc;
  }
  /* Each of the first n - 1 allocations failed once; the last run made
   * fewer than n (about n - 1: device threads may reorder a few). */
  assert_true(n > 100);
  print_message("allocation-failure walk%s: %ld allocations failed %s (%d "
                "distinct call sites); the complete run made %ld "
                "allocations in %d steps\n", persistent ? " (persistent)" : "",
                n - 1, persistent ? "from each on" : "one at a time", nsites,
                atomic_load(&r.a.calls), r.steps);
  if (getenv("XRT_ALLOC_SITES"))
    for (int i = 0; i < nsites; i++) {
      char site[256];
      site_name(sites[i], site, sizeof site);
      print_message("  site %s\n", site);
    }
}

static void test_every_allocation_fails_once(void **state) {
  (void)state;
  walk(false);
}

/* As SQLite's persistent mode: once memory runs out it stays out, so the
 * error and cleanup paths must not need memory either. */
static void test_allocations_fail_from_n_on(void **state) {
  (void)state;
  walk(true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_allocation_fails_once),
      cmocka_unit_test(test_allocations_fail_from_n_on),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
