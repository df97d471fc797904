/*
 * test_pmap.c - xrt_execute_sharded and pmap: replicated programs over
 * several devices checked element by element, output specs, bad input, and
 * the pmap compile cache under concurrent callers.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers, nanosleep */

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "test_util.h"

#define NDEV 8

static const char *add4 =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* x: [n][w] Unstacked over the devices, x[k][j] = 100k + j; y: [w]
 * replicated, y[j] = 0.5 j + 1. */
typedef struct add_inputs {
  int n, w;
  float x[NDEV * 16], y[16];
  xrt_sharded_array *xa, *ya;
} add_inputs;

static xrt_status add_inputs_make(xrt_client *c, const int *dev_ids, int n,
                                  int w, add_inputs *in) {
  memset(in, 0, sizeof *in);
  in->n = n;
  in->w = w;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < w; j++) in->x[k * w + j] = (float)(100 * k + j);
  for (int j = 0; j < w; j++) in->y[j] = 0.5f * (float)j + 1.0f;
  xrt_device *devs[NDEV];
  for (int k = 0; k < n; k++) devs[k] = xrt_client_device(c, dev_ids[k]);
  xrt_shape xs = TU_SHAPE(XRT_F32, n, w), ys = TU_SHAPE(XRT_F32, w);
  xrt_sharding_spec sx = tu_spec_unstacked(2, n), sy = tu_spec_replicated(1, n);
  xrt_status s = xrt_sharded_array_from_host(c, &xs, in->x, &sx, devs, n,
                                             &in->xa);
  if (!s) s = xrt_sharded_array_from_host(c, &ys, in->y, &sy, devs, n, &in->ya);
  return s;
}

static void add_inputs_free(add_inputs *in) {
  xrt_sharded_array_release(in->xa);
  xrt_sharded_array_release(in->ya);
}

/* Checks an output of the default spec: [n][w], out[k][j] = x[k][j] + y[j]. */
static int check_add_output(xrt_sharded_array *out, const add_inputs *in) {
  xrt_shape s;
  if (xrt_sharded_array_shape(out, &s) || s.rank != 2 || s.dims[0] != in->n ||
      s.dims[1] != in->w)
    return -1;
  float got[NDEV * 16];
  if (xrt_sharded_array_to_host(out, got, sizeof got)) return -2;
  for (int k = 0; k < in->n; k++)
    for (int j = 0; j < in->w; j++)
      if (got[k * in->w + j] != (float)(100 * k + j) + (0.5f * (float)j + 1.0f))
        return -3;
  return 0;
}

/* ---- xrt_execute_sharded ---- */

static void test_execute_sharded_add(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 0, 0);
  static const int ids[4] = {4, 5, 6, 7};
  xrt_executable *e = tu_compile(c, add4, 4, ids);
  add_inputs in;
  assert_int_equal(add_inputs_make(c, ids, 4, 4, &in), XRT_OK);
  xrt_sharded_array *args[2] = {in.xa, in.ya}, *out = NULL;
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_sharded(e, args, 2, &out, 1, NULL, &done),
                   XRT_OK);
  assert_int_equal(xrt_event_await(done), XRT_OK);
  xrt_event_release(done);
  assert_int_equal(check_add_output(out, &in), 0);
  /* The default output spec: Unstacked(4) over the arguments' devices. */
  xrt_sharding_spec spec;
  assert_int_equal(xrt_sharded_array_spec(out, &spec), XRT_OK);
  assert_int_equal(spec.dims[0].kind, XRT_DIM_UNSTACKED);
  assert_int_equal(spec.dims[0].size, 4);
  for (int k = 0; k < 4; k++)
    assert_int_equal(
        xrt_device_id(xrt_buffer_device(xrt_sharded_array_shard(out, k))),
        ids[k]);
  xrt_sharded_array_release(out);

  /* Output specs: Chunked([4]) makes one [16] array; Replicated(4) claims
   * the pieces are equal, so assembly reads device 0's piece only. */
  xrt_sharding_spec chunk = tu_spec_chunked(1, 0, 4), repl = tu_spec_replicated(1, 4);
  const xrt_sharding_spec *specs[1] = {&chunk};
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  o.output_specs = specs;
  assert_int_equal(xrt_execute_sharded(e, args, 2, &out, 1, &o, NULL), XRT_OK);
  float flat[16];
  assert_int_equal(xrt_sharded_array_to_host(out, flat, sizeof flat), XRT_OK);
  for (int i = 0; i < 16; i++)
    assert_true(flat[i] == in.x[i] + in.y[i % 4]);
  xrt_sharded_array_release(out);
  specs[0] = &repl;
  assert_int_equal(xrt_execute_sharded(e, args, 2, &out, 1, &o, NULL), XRT_OK);
  float row[4];
  assert_int_equal(xrt_sharded_array_to_host(out, row, sizeof row), XRT_OK);
  for (int j = 0; j < 4; j++) assert_true(row[j] == in.x[j] + in.y[j]);
  xrt_sharded_array_release(out);
  add_inputs_free(&in);
  xrt_client_release(c);
}

static void test_execute_sharded_bad_input(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 0, 0);
  static const int lo[4] = {0, 1, 2, 3}, hi[4] = {4, 5, 6, 7};
  xrt_executable *e = tu_compile(c, add4, 4, lo);
  add_inputs a, b, two;
  assert_int_equal(add_inputs_make(c, lo, 4, 4, &a), XRT_OK);
  assert_int_equal(add_inputs_make(c, hi, 4, 4, &b), XRT_OK);
  assert_int_equal(add_inputs_make(c, lo, 2, 4, &two), XRT_OK);
  xrt_sharded_array *out = NULL;

  /* Shards on different device lists. */
  xrt_sharded_array *mixed[2] = {a.xa, b.ya};
  assert_int_equal(xrt_execute_sharded(e, mixed, 2, &out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "argument 1 has shard 0 on device 4, argument 0 on device 0");
  assert_null(out);
  /* Device count mismatch with the executable. */
  xrt_sharded_array *small[2] = {two.xa, two.ya};
  assert_int_equal(xrt_execute_sharded(e, small, 2, &out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "the arguments span 2 devices, the "
                     "executable runs on 4");
  /* Output specs inconsistent with the per-device output. */
  xrt_sharding_spec r2 = tu_spec_replicated(1, 2), rank2 = tu_spec_replicated(2, 4);
  const xrt_sharding_spec *specs[1] = {&r2};
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  o.output_specs = specs;
  xrt_sharded_array *args[2] = {a.xa, a.ya};
  assert_int_equal(xrt_execute_sharded(e, args, 2, &out, 1, &o, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "output 0: the sharding spec spans 2 "
                     "devices, the execution runs on 4");
  specs[0] = &rank2;
  assert_int_equal(xrt_execute_sharded(e, args, 2, &out, 1, &o, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "output 0: ");
  TU_ASSERT_CONTAINS(xrt_last_error(), "needs pieces of rank 2, got 1");
  /* options->devices must repeat the arguments' devices. */
  xrt_device *devs[4];
  for (int k = 0; k < 4; k++) devs[k] = xrt_client_device(c, hi[k]);
  xrt_execute_options_init(&o);
  o.devices = devs;
  assert_int_equal(xrt_execute_sharded(e, args, 2, &out, 1, &o, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "options->devices[0] is device 4");
  /* Wrong output count, then stale handles. */
  xrt_sharded_array *outs2[2];
  assert_int_equal(xrt_execute_sharded(e, args, 2, outs2, 2, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "returns 1 result(s), room for 2");
  xrt_sharded_array *stale = b.xa;
  xrt_sharded_array_release(stale);
  b.xa = NULL;
  xrt_sharded_array *with_stale[2] = {stale, a.ya};
  assert_int_equal(xrt_execute_sharded(e, with_stale, 2, &out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 0 is not a live sharded array");
  /* Nothing failed above left a usable launch behind: a good one works. */
  assert_int_equal(xrt_execute_sharded(e, args, 2, &out, 1, NULL, NULL),
                   XRT_OK);
  assert_int_equal(check_add_output(out, &a), 0);
  xrt_sharded_array_release(out);
  xrt_executable_release(e);
  assert_int_equal(xrt_execute_sharded(e, args, 2, &out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  add_inputs_free(&a);
  add_inputs_free(&b);
  add_inputs_free(&two);
  xrt_client_release(c);
}

/* replica_id differs per device: out[k][j] = x[k][j] + y[j] + k. */
static const char *add_replica_id =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %r = stablehlo.replica_id : tensor<ui32>\n"
    "  %f = stablehlo.convert %r : (tensor<ui32>) -> tensor<f32>\n"
    "  %g = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> "
    "tensor<4xf32>\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  %1 = stablehlo.add %0, %g : tensor<4xf32>\n"
    "  func.return %1 : tensor<4xf32>\n"
    "}\n";

static void test_execute_sharded_replica_id(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 0, 0);
  static const int ids[4] = {6, 4, 2, 0};
  xrt_executable *e = tu_compile(c, add_replica_id, 4, ids);
  add_inputs in;
  assert_int_equal(add_inputs_make(c, ids, 4, 4, &in), XRT_OK);
  xrt_sharded_array *args[2] = {in.xa, in.ya}, *out = NULL;
  assert_int_equal(xrt_execute_sharded(e, args, 2, &out, 1, NULL, NULL),
                   XRT_OK);
  float got[16];
  assert_int_equal(xrt_sharded_array_to_host(out, got, sizeof got), XRT_OK);
  for (int k = 0; k < 4; k++)
    for (int j = 0; j < 4; j++)
      assert_true(got[k * 4 + j] ==
                  (float)(100 * k + j) + (0.5f * (float)j + 1.0f) + (float)k);
  xrt_sharded_array_release(out);
  add_inputs_free(&in);
  xrt_client_release(c);
}

/* ---- pmap ---- */

typedef struct source_state {
  atomic_int calls;
  atomic_int calls_by_width[17];
} source_state;

static void pause_ms(int ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* Traces "add" for the piece width; width 3 gives a program that does not
 * parse, width 5 a callback failure. */
static xrt_status add_source(void *user, const xrt_shape *shapes, int n,
                             char **out_text, size_t *out_len) {
  source_state *st = (source_state *)user;
  atomic_fetch_add(&st->calls, 1);
  int64_t w = n == 2 && shapes[0].rank == 1 ? shapes[0].dims[0] : 0;
  if (w >= 0 && w <= 16) atomic_fetch_add(&st->calls_by_width[w], 1);
  /* Gives the other callers time to pile up behind this compilation. */
  pause_ms(20);
  if (w == 5) return XRT_UNIMPLEMENTED;
  char *text = malloc(512);
  if (w == 3)
    snprintf(text, 512, "func.func @main(%%a: tensor<3xf32>) -> "
             "tensor<3xf32> {\n  func.return %%b : tensor<3xf32>\n}\n");
  else
    snprintf(text, 512,
             "func.func @main(%%a: tensor<%" PRId64 "xf32>, %%b: tensor<%"
             PRId64 "xf32>) -> tensor<%" PRId64 "xf32> {\n"
             "  %%0 = stablehlo.add %%a, %%b : tensor<%" PRId64 "xf32>\n"
             "  func.return %%0 : tensor<%" PRId64 "xf32>\n}\n",
             w, w, w, w, w);
  *out_text = text;
  *out_len = strlen(text);
  return XRT_OK;
}

typedef struct caller {
  xrt_client *client;
  xrt_pmap *pmap;
  pthread_barrier_t *start;
  const int *ids;
  int n, w;
  xrt_status status;
  char message[512];
  int check;
} caller;

/* One host thread: its own inputs, one pmap call, its own checks. */
static void *call_pmap(void *arg) {
  caller *c = (caller *)arg;
  add_inputs in;
  c->check = -10;
  xrt_status s = add_inputs_make(c->client, c->ids, c->n, c->w, &in);
  pthread_barrier_wait(c->start);
  xrt_sharded_array *out = NULL;
  if (!s) {
    xrt_sharded_array *args[2] = {in.xa, in.ya};
    s = xrt_pmap_call(c->pmap, args, 2, &out, 1, NULL, NULL);
  }
  c->status = s;
  snprintf(c->message, sizeof c->message, "%s", s ? xrt_last_error() : "");
  if (!s) c->check = check_add_output(out, &in);
  xrt_sharded_array_release(out);
  add_inputs_free(&in);
  return NULL;
}

/* Runs `threads` concurrent callers of one signature. */
static void run_callers(xrt_client *client, xrt_pmap *p, int threads,
                        const int *ids, int n, int w, caller *cs) {
  pthread_t t[8];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  for (int i = 0; i < threads; i++) {
    cs[i] = (caller){client, p, &start, ids, n, w, XRT_OK, "", 0};
    assert_int_equal(pthread_create(&t[i], NULL, call_pmap, &cs[i]), 0);
  }
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
}

static void test_pmap_compiles_once(void **state) {
  (void)state;
  xrt_client *client = tu_client(NDEV, 0, 0);
  source_state st = {0};
  xrt_pmap_options o;
  xrt_pmap_options_init(&o);
  o.source = add_source;
  o.source_user = &st;
  xrt_pmap *p = NULL;
  assert_int_equal(xrt_pmap_create(client, &o, &p), XRT_OK);
  assert_int_equal(xrt_pmap_num_compiled(p), 0);
  static const int ids8[8] = {7, 6, 5, 4, 3, 2, 1, 0};
  static const int ids4[4] = {0, 1, 2, 3};
  caller cs[8];

  /* 8 threads, one signature: one trace, one compilation, 8 results. */
  run_callers(client, p, 8, ids8, 8, 4, cs);
  for (int i = 0; i < 8; i++) {
    if (cs[i].status) fail_msg("caller %d: %s", i, cs[i].message);
    assert_int_equal(cs[i].check, 0);
  }
  assert_int_equal(atomic_load(&st.calls), 1);
  assert_int_equal(xrt_pmap_num_compiled(p), 1);

  /* A second signature (other piece shapes) compiles again, once. */
  run_callers(client, p, 4, ids8, 8, 8, cs);
  for (int i = 0; i < 4; i++) assert_int_equal(cs[i].check, 0);
  assert_int_equal(atomic_load(&st.calls_by_width[8]), 1);
  /* So does the same shapes over other devices. */
  run_callers(client, p, 2, ids4, 4, 4, cs);
  for (int i = 0; i < 2; i++) assert_int_equal(cs[i].check, 0);
  assert_int_equal(atomic_load(&st.calls), 3);
  assert_int_equal(xrt_pmap_num_compiled(p), 3);

  /* A failing signature: 3 callers get the same error, one trace. */
  run_callers(client, p, 3, ids4, 4, 3, cs);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(cs[i].status, XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(cs[i].message, "2:15: use of undefined value %b");
    assert_string_equal(cs[i].message, cs[0].message);
  }
  assert_int_equal(atomic_load(&st.calls_by_width[3]), 1);
  /* A later caller of that signature gets it too, still without a trace. */
  run_callers(client, p, 1, ids4, 4, 3, cs);
  assert_int_equal(cs[0].status, XRT_INVALID_ARGUMENT);
  assert_string_equal(cs[0].message, cs[1].message);
  assert_int_equal(atomic_load(&st.calls_by_width[3]), 1);

  /* A callback failure is remembered the same way. */
  run_callers(client, p, 3, ids4, 4, 5, cs);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(cs[i].status, XRT_UNIMPLEMENTED);
    TU_ASSERT_CONTAINS(cs[i].message, "source callback failed with "
                       "UNIMPLEMENTED for the signature (tensor<5xf32>, "
                       "tensor<5xf32>)");
  }
  assert_int_equal(atomic_load(&st.calls_by_width[5]), 1);
  assert_int_equal(atomic_load(&st.calls), 5);
  assert_int_equal(xrt_pmap_num_compiled(p), 5);
  /* The working signatures still work. */
  run_callers(client, p, 1, ids8, 8, 4, cs);
  assert_int_equal(cs[0].check, 0);
  assert_int_equal(atomic_load(&st.calls), 5);
  xrt_pmap_release(p);
  xrt_client_release(client);
}

static void test_pmap_fixed_text(void **state) {
  (void)state;
  xrt_client *client = tu_client(NDEV, 0, 0);
  xrt_pmap_options o;
  xrt_pmap_options_init(&o);
  o.text = "func.func @main() {\n  func.return %x : tensor<f32>\n}\n";
  o.len = strlen(o.text);
  o.compile.filename = "bad.mlir";
  xrt_pmap *p = NULL;
  /* Fixed text is parsed once, at create. */
  assert_int_equal(xrt_pmap_create(client, &o, &p), XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(xrt_last_error(), "bad.mlir:2:15: use of undefined value %x");
  assert_null(p);
  o.text = add4;
  o.len = strlen(add4);
  assert_int_equal(xrt_pmap_create(client, &o, &p), XRT_OK);
  static const int ids[4] = {1, 3, 5, 7};
  caller cs[2];
  run_callers(client, p, 2, ids, 4, 4, cs);
  for (int i = 0; i < 2; i++) assert_int_equal(cs[i].check, 0);
  /* A signature the entry does not take fails, and stays failed. */
  for (int round = 0; round < 2; round++) {
    run_callers(client, p, 1, ids, 4, 8, cs);
    assert_int_equal(cs[0].status, XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(cs[0].message,
                       "the arguments' pieces (tensor<8xf32>, tensor<8xf32>) "
                       "do not match the inputs (tensor<4xf32>, "
                       "tensor<4xf32>) of @main");
  }
  assert_int_equal(xrt_pmap_num_compiled(p), 2);
  xrt_pmap_release(p);
  /* A released pmap is a stale handle. */
  xrt_sharded_array *out = NULL;
  add_inputs in;
  assert_int_equal(add_inputs_make(client, ids, 4, 4, &in), XRT_OK);
  xrt_sharded_array *args[2] = {in.xa, in.ya};
  assert_int_equal(xrt_pmap_call(p, args, 2, &out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_pmap_num_compiled(p), -1);
  add_inputs_free(&in);
  /* Bad options. */
  xrt_pmap_options_init(&o);
  assert_int_equal(xrt_pmap_create(client, &o, &p), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_pmap_create(client, NULL, &p), XRT_INVALID_ARGUMENT);
  xrt_client_release(client);
}

/* A pmap may outlive its client: calls fail cleanly, release still frees
 * it (ASan checks for leaks and stale accesses). */
static void test_pmap_outlives_client(void **state) {
  (void)state;
  xrt_client *client = tu_client(4, 0, 0);
  xrt_pmap *p = tu_pmap(client, add4);
  static const int ids[4] = {0, 1, 2, 3};
  caller cs[1];
  run_callers(client, p, 1, ids, 4, 4, cs);
  assert_int_equal(cs[0].check, 0);
  add_inputs in;
  assert_int_equal(add_inputs_make(client, ids, 4, 4, &in), XRT_OK);
  xrt_sharded_array *args[2] = {in.xa, in.ya}, *out = NULL;
  xrt_client_release(client);
  assert_int_equal(xrt_pmap_call(p, args, 2, &out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "the pmap's client was released");
  assert_null(out);
  xrt_pmap_release(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_execute_sharded_add),
      cmocka_unit_test(test_execute_sharded_bad_input),
      cmocka_unit_test(test_execute_sharded_replica_id),
      cmocka_unit_test(test_pmap_compiles_once),
      cmocka_unit_test(test_pmap_fixed_text),
      cmocka_unit_test(test_pmap_outlives_client),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
