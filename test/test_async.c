/*
 * test_async.c - events, asynchronous transfers and executions, error
 * propagation through poisoned buffers, multi-device and MPMD launches, and
 * the bad input of issue #4.
 *
 * Work is held back deterministically by a "gate": a host function
 * (custom_call @gate) that blocks the device's worker until the test opens
 * it, so "still pending" states are certain, not timing-dependent.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <pthread.h>

/* ---- a gate: host function that blocks until opened ---- */

typedef struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool open;
  int entered; /* calls that reached the gate */
} gate;

static gate g_gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                      false, 0};

static void gate_close(void) {
  pthread_mutex_lock(&g_gate.mu);
  g_gate.open = false;
  g_gate.entered = 0;
  pthread_mutex_unlock(&g_gate.mu);
}

static void gate_open(void) {
  pthread_mutex_lock(&g_gate.mu);
  g_gate.open = true;
  pthread_cond_broadcast(&g_gate.cv);
  pthread_mutex_unlock(&g_gate.mu);
}

/* Waits until n calls have reached the gate (the work is surely running). */
static void gate_wait_entered(int n) {
  pthread_mutex_lock(&g_gate.mu);
  while (g_gate.entered < n) pthread_cond_wait(&g_gate.cv, &g_gate.mu);
  pthread_mutex_unlock(&g_gate.mu);
}

/* custom_call @gate(x) -> x, once the gate is open. */
static xrt_status gate_fn(void *user, xrt_host_call *call) {
  (void)user;
  pthread_mutex_lock(&g_gate.mu);
  g_gate.entered++;
  pthread_cond_broadcast(&g_gate.cv);
  while (!g_gate.open) pthread_cond_wait(&g_gate.cv, &g_gate.mu);
  pthread_mutex_unlock(&g_gate.mu);
  memcpy(call->outputs[0].data, call->inputs[0].data, call->inputs[0].bytes);
  return XRT_OK;
}

/* custom_call @boom(x): always fails. */
static xrt_status boom_fn(void *user, xrt_host_call *call) {
  (void)user;
  return xrt_host_call_fail(call, XRT_ABORTED, "boom from the host");
}

static const char kAdd[] =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* x + 1, after the gate. */
static const char kGated[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %g = stablehlo.custom_call @gate(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
    "  %0 = stablehlo.add %g, %one : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

static const char kBoom[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.custom_call @boom(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

static const char kTwice[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %x, %x : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* A client of `devices` devices with the host functions gate and boom. */
static xrt_client *new_client(int devices) {
  xrt_client *c = tu_client(devices, 0, 64 << 20);
  assert_int_equal(xrt_client_register_host_function(c, "gate", gate_fn, NULL),
                   XRT_OK);
  assert_int_equal(xrt_client_register_host_function(c, "boom", boom_fn, NULL),
                   XRT_OK);
  return c;
}


static const xrt_shape kVec4 = {XRT_F32, 1, {4}};

static xrt_buffer *upload(xrt_client *c, int dev, const float *v) {
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, dev), &kVec4,
                                        v, &b), XRT_OK);
  return b;
}

static void assert_buffer(xrt_buffer *b, const float *want) {
  float got[4] = {0};
  xrt_status s = xrt_buffer_to_host(b, got, sizeof got);
  if (s) fail_msg("to_host: %s", xrt_last_error());
  for (int i = 0; i < 4; i++) assert_float_equal(got[i], want[i], 0);
}

/* ---- callbacks ---- */

typedef struct cb_log {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int n;
  int order[8];
  xrt_status status[8];
  char message[8][256];
  pthread_t thread[8];
} cb_log;

typedef struct cb_arg {
  cb_log *log;
  int id;
} cb_arg;

static void cb_record(void *user, xrt_status status, const char *message) {
  cb_arg *a = (cb_arg *)user;
  cb_log *l = a->log;
  pthread_mutex_lock(&l->mu);
  if (l->n < 8) {
    l->order[l->n] = a->id;
    l->status[l->n] = status;
    snprintf(l->message[l->n], sizeof l->message[0], "%s", message);
    l->thread[l->n] = pthread_self();
    l->n++;
  }
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
}

static void cb_log_init(cb_log *l) {
  memset(l, 0, sizeof *l);
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
}

static void cb_wait(cb_log *l, int n) {
  pthread_mutex_lock(&l->mu);
  while (l->n < n) pthread_cond_wait(&l->cv, &l->mu);
  pthread_mutex_unlock(&l->mu);
}

static int cb_count(cb_log *l) {
  pthread_mutex_lock(&l->mu);
  int n = l->n;
  pthread_mutex_unlock(&l->mu);
  return n;
}

static void cb_log_destroy(cb_log *l) {
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
}

/* ---- tests ---- */

static void test_async_round_trip(void **state) {
  (void)state;
  xrt_client *c = new_client(2);
  float in[4] = {1.5f, -2, 3, 4e6f}, out[4] = {0}, out2[4] = {0};
  xrt_buffer *b = NULL, *b1 = NULL;
  xrt_event *up = NULL, *down = NULL, *down1 = NULL;
  assert_int_equal(xrt_buffer_from_host_async(c, xrt_client_device(c, 0),
                                              &kVec4, in, &b, &up), XRT_OK);
  assert_non_null(b);
  assert_int_equal(xrt_event_await(up), XRT_OK);
  assert_true(xrt_event_is_ready(up));
  assert_int_equal(xrt_event_status(up), XRT_OK);
  /* Copy to the other device and read both back, all queued at once. */
  assert_int_equal(xrt_buffer_copy_to_device_async(b, xrt_client_device(c, 1),
                                                   &b1), XRT_OK);
  assert_ptr_equal(xrt_buffer_device(b1), xrt_client_device(c, 1));
  assert_int_equal(xrt_buffer_to_host_async(b, out, sizeof out, &down),
                   XRT_OK);
  assert_int_equal(xrt_buffer_to_host_async(b1, out2, sizeof out2, &down1),
                   XRT_OK);
  assert_int_equal(xrt_event_await(down), XRT_OK);
  assert_int_equal(xrt_event_await(down1), XRT_OK);
  assert_memory_equal(out, in, sizeof in);
  assert_memory_equal(out2, in, sizeof in);
  /* A buffer's ready event; two references release independently. */
  xrt_event *r1 = NULL, *r2 = NULL;
  assert_int_equal(xrt_buffer_ready_event(b1, &r1), XRT_OK);
  assert_int_equal(xrt_buffer_ready_event(b1, &r2), XRT_OK);
  assert_ptr_not_equal(r1, r2);
  assert_int_equal(xrt_event_release(r1), XRT_OK);
  assert_true(xrt_event_is_ready(r2));
  assert_int_equal(xrt_event_status(r2), XRT_OK);
  assert_int_equal(xrt_event_release(r2), XRT_OK);
  assert_int_equal(xrt_event_release(r2), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_event_await(r1), XRT_INVALID_ARGUMENT);
  assert_false(xrt_event_is_ready(r1));
  /* A buffer made synchronously has a ready event too. */
  xrt_buffer *s = upload(c, 1, in);
  assert_int_equal(xrt_buffer_ready_event(s, &r1), XRT_OK);
  assert_int_equal(xrt_event_await_for(r1, 0), XRT_OK);
  xrt_event_release(r1);
  /* from_host_async with only the buffer's event to wait on. */
  xrt_buffer *b2 = NULL;
  assert_int_equal(xrt_buffer_from_host_async(c, xrt_client_device(c, 1),
                                              &kVec4, in, &b2, NULL), XRT_OK);
  assert_int_equal(xrt_buffer_ready_event(b2, &r1), XRT_OK);
  assert_int_equal(xrt_event_await(r1), XRT_OK);
  xrt_event_release(r1);
  assert_buffer(b2, in);
  xrt_event_release(up);
  xrt_event_release(down);
  xrt_event_release(down1);
  xrt_client_release(c); /* frees b, b1, b2, s */
}

static void test_async_execute_and_callbacks(void **state) {
  (void)state;
  xrt_client *c = new_client(1);
  xrt_device *d = xrt_client_device(c, 0);
  xrt_executable *gated = tu_compile(c, kGated, 0, NULL);
  float in[4] = {1, 2, 3, 4}, want[4] = {2, 3, 4, 5};
  xrt_buffer *x = upload(c, 0, in), *y = NULL;
  cb_log log;
  cb_log_init(&log);
  cb_arg a1 = {&log, 1}, a2 = {&log, 2}, a3 = {&log, 3};
  gate_close();
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_async(gated, d, &x, 1, &y, 1, NULL, &done),
                   XRT_OK);
  assert_non_null(y);
  gate_wait_entered(1);
  assert_false(xrt_event_is_ready(done));
  assert_int_equal(xrt_event_status(done), XRT_UNAVAILABLE);
  assert_int_equal(xrt_event_await_for(done, 1000000), XRT_DEADLINE_EXCEEDED);
  xrt_event *yr = NULL;
  assert_int_equal(xrt_buffer_ready_event(y, &yr), XRT_OK);
  assert_false(xrt_event_is_ready(yr));
  assert_int_equal(xrt_event_on_ready(done, cb_record, &a1), XRT_OK);
  assert_int_equal(xrt_event_on_ready(done, cb_record, &a2), XRT_OK);
  assert_int_equal(cb_count(&log), 0);
  gate_open();
  assert_int_equal(xrt_event_await(done), XRT_OK);
  assert_int_equal(xrt_event_await(yr), XRT_OK);
  cb_wait(&log, 2);
  /* A callback registered after completion still runs on a runtime thread. */
  assert_int_equal(xrt_event_on_ready(done, cb_record, &a3), XRT_OK);
  cb_wait(&log, 3);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(log.order[i], i + 1);
    assert_int_equal(log.status[i], XRT_OK);
    assert_string_equal(log.message[i], "");
    assert_false(pthread_equal(log.thread[i], pthread_self()));
  }
  assert_buffer(y, want);
  assert_int_equal(xrt_event_on_ready(done, NULL, NULL), XRT_INVALID_ARGUMENT);
  xrt_event_release(done);
  assert_int_equal(xrt_event_on_ready(done, cb_record, &a1),
                   XRT_INVALID_ARGUMENT);
  xrt_event_release(yr);
  cb_log_destroy(&log);
  xrt_client_release(c);
}

static void test_error_propagation(void **state) {
  (void)state;
  xrt_client *c = new_client(2);
  xrt_device *d0 = xrt_client_device(c, 0), *d1 = xrt_client_device(c, 1);
  xrt_executable *boom = tu_compile(c, kBoom, 0, NULL);
  xrt_executable *twice = tu_compile(c, kTwice, 0, NULL);
  float in[4] = {1, 2, 3, 4}, twice_in[4] = {2, 4, 6, 8}, out[4];
  xrt_buffer *x = upload(c, 0, in), *p = NULL, *q = NULL, *r = NULL;
  cb_log log;
  cb_log_init(&log);
  cb_arg a1 = {&log, 1};
  xrt_event *done = NULL, *done2 = NULL;
  assert_int_equal(xrt_execute_async(boom, d0, &x, 1, &p, 1, NULL, &done),
                   XRT_OK);
  assert_int_equal(xrt_event_on_ready(done, cb_record, &a1), XRT_OK);
  /* Queued behind the failure: reads the poisoned output. */
  assert_int_equal(xrt_execute_async(twice, d0, &p, 1, &q, 1, NULL, &done2),
                   XRT_OK);
  assert_int_equal(xrt_event_await(done), XRT_ABORTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "boom from the host");
  assert_int_equal(xrt_event_await(done2), XRT_ABORTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 0: ");
  TU_ASSERT_CONTAINS(xrt_last_error(), "boom from the host");
  cb_wait(&log, 1);
  assert_int_equal(log.status[0], XRT_ABORTED);
  TU_ASSERT_CONTAINS(log.message[0], "boom from the host");
  /* Poisoned buffers: to_host, copies and synchronous executes fail. */
  assert_int_equal(xrt_buffer_to_host(p, out, sizeof out), XRT_ABORTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "boom from the host");
  assert_int_equal(xrt_buffer_to_host(q, out, sizeof out), XRT_ABORTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "boom from the host");
  assert_int_equal(xrt_buffer_copy_to_device(q, d1, &r), XRT_ABORTED);
  assert_null(r);
  assert_int_equal(xrt_buffer_copy_to_device_async(q, d1, &r), XRT_OK);
  xrt_event *rr = NULL, *rd = NULL;
  assert_int_equal(xrt_buffer_ready_event(r, &rr), XRT_OK);
  assert_int_equal(xrt_event_await(rr), XRT_ABORTED);
  assert_int_equal(xrt_buffer_to_host_async(r, out, sizeof out, &rd), XRT_OK);
  assert_int_equal(xrt_event_await(rd), XRT_ABORTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "boom from the host");
  xrt_buffer *s = NULL;
  assert_int_equal(xrt_execute(twice, d0, &p, 1, &s, 1, NULL), XRT_ABORTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 0: ");
  assert_null(s);
  /* A failing synchronous execute returns no output. */
  assert_int_equal(xrt_execute(boom, d0, &x, 1, &s, 1, NULL), XRT_ABORTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "boom from the host");
  assert_null(s);
  /* Everything else stays usable. */
  assert_buffer(x, in);
  assert_int_equal(xrt_execute(twice, d0, &x, 1, &s, 1, NULL), XRT_OK);
  assert_buffer(s, twice_in);
  xrt_buffer *x1 = upload(c, 1, in), *s1 = NULL;
  assert_int_equal(xrt_execute(twice, d1, &x1, 1, &s1, 1, NULL), XRT_OK);
  assert_buffer(s1, twice_in);
  xrt_event_release(rr);
  xrt_event_release(rd);
  xrt_event_release(done);
  xrt_event_release(done2);
  cb_log_destroy(&log);
  xrt_client_release(c);
}

/* Releases of inputs, outputs and the executable while work is queued. */
static void test_release_while_pending(void **state) {
  (void)state;
  xrt_client *c = new_client(1);
  xrt_device *d = xrt_client_device(c, 0);
  xrt_executable *gated = tu_compile(c, kGated, 0, NULL);
  xrt_executable *twice = tu_compile(c, kTwice, 0, NULL);
  float in[4] = {1, 2, 3, 4}, want[4] = {4, 6, 8, 10};
  xrt_buffer *x = upload(c, 0, in), *y = NULL, *z = NULL, *dropped = NULL;
  gate_close();
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_async(gated, d, &x, 1, &y, 1, NULL, NULL),
                   XRT_OK);
  assert_int_equal(xrt_execute_async(twice, d, &y, 1, &z, 1, NULL, &done),
                   XRT_OK);
  assert_int_equal(xrt_execute_async(twice, d, &y, 1, &dropped, 1, NULL,
                                     NULL), XRT_OK);
  gate_wait_entered(1);
  assert_int_equal(xrt_buffer_release(x), XRT_OK);
  assert_int_equal(xrt_buffer_release(y), XRT_OK);
  assert_int_equal(xrt_buffer_release(dropped), XRT_OK);
  assert_int_equal(xrt_executable_release(gated), XRT_OK);
  assert_int_equal(xrt_executable_release(twice), XRT_OK);
  assert_int_equal(xrt_buffer_release(x), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_executable_release(twice), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_execute_async(twice, d, &z, 1, &y, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  gate_open();
  assert_int_equal(xrt_event_await(done), XRT_OK);
  assert_buffer(z, want);
  xrt_event_release(done);
  xrt_client_release(c);
}

/* What a callback on an execute's event saw of the client's stats; done
 * under mu once it has run (a waiter on the event may wake first). */
typedef struct stats_seen {
  xrt_client *client;
  xrt_client_stats stats;
  xrt_status status;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
} stats_seen;

static void cb_read_stats(void *user, xrt_status status, const char *message) {
  (void)status;
  (void)message;
  stats_seen *seen = (stats_seen *)user;
  xrt_status s = xrt_client_get_stats(seen->client, &seen->stats);
  pthread_mutex_lock(&seen->mu);
  seen->status = s;
  seen->done = true;
  pthread_cond_broadcast(&seen->cv);
  pthread_mutex_unlock(&seen->mu);
}

static void stats_seen_wait(stats_seen *seen) {
  pthread_mutex_lock(&seen->mu);
  while (!seen->done) pthread_cond_wait(&seen->cv, &seen->mu);
  pthread_mutex_unlock(&seen->mu);
}

/* Buffers released while an execute that reads or writes them is queued
 * are freed by the time its event completes: a callback on the event (it
 * runs inside the completion) and the caller woken by it both see them in
 * device_frees and out of device_bytes_in_use. */
static void test_release_frees_before_completion(void **state) {
  (void)state;
  xrt_client *c = new_client(1);
  xrt_device *d = xrt_client_device(c, 0);
  xrt_executable *gated = tu_compile(c, kGated, 0, NULL);
  float in[4] = {1, 2, 3, 4};
  xrt_buffer *x = upload(c, 0, in), *y = NULL;
  xrt_client_stats s0, s1, s2;
  assert_int_equal(xrt_client_get_stats(c, &s0), XRT_OK);
  gate_close();
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_async(gated, d, &x, 1, &y, 1, NULL, &done),
                   XRT_OK);
  gate_wait_entered(1);
  stats_seen seen = {c, {0}, XRT_UNKNOWN, PTHREAD_MUTEX_INITIALIZER,
                     PTHREAD_COND_INITIALIZER, false};
  assert_int_equal(xrt_event_on_ready(done, cb_read_stats, &seen), XRT_OK);
  assert_int_equal(xrt_buffer_release(x), XRT_OK);
  assert_int_equal(xrt_buffer_release(y), XRT_OK);
  /* Both are still the execute's: nothing freed yet. */
  assert_int_equal(xrt_client_get_stats(c, &s1), XRT_OK);
  assert_int_equal(s1.device_allocations, s0.device_allocations + 1);
  assert_int_equal(s1.device_frees, s0.device_frees);
  assert_int_equal(s1.device_bytes_in_use, s0.device_bytes_in_use + 16);
  gate_open();
  assert_int_equal(xrt_event_await(done), XRT_OK);
  stats_seen_wait(&seen);
  assert_int_equal(seen.status, XRT_OK);
  assert_int_equal(seen.stats.device_frees, s0.device_frees + 2);
  assert_int_equal(seen.stats.device_bytes_in_use, s0.device_bytes_in_use - 16);
  assert_int_equal(xrt_client_get_stats(c, &s2), XRT_OK);
  assert_int_equal(s2.device_frees, s0.device_frees + 2);
  assert_int_equal(s2.device_bytes_in_use, s0.device_bytes_in_use - 16);
  xrt_event_release(done);
  xrt_executable_release(gated);
  xrt_client_release(c);
}

static int g_chain_done;
static pthread_mutex_t g_chain_mu = PTHREAD_MUTEX_INITIALIZER;

static void chain_cb(void *user, xrt_status status, const char *message) {
  (void)user;
  (void)message;
  pthread_mutex_lock(&g_chain_mu);
  if (status == XRT_OK) g_chain_done++;
  pthread_mutex_unlock(&g_chain_mu);
}

/* Client release waits for queued work and its callbacks, then frees
 * everything, including events and buffers the caller still holds. */
static void test_client_release_with_pending_work(void **state) {
  (void)state;
  enum { N = 40 };
  xrt_client *c = new_client(2);
  xrt_executable *twice = tu_compile(c, kTwice, 0, NULL);
  float in[4] = {1, 2, 3, 4};
  static float out[4];
  xrt_buffer *b = upload(c, 0, in);
  g_chain_done = 0;
  for (int i = 0; i < N; i++) {
    xrt_buffer *next = NULL;
    xrt_event *done = NULL;
    xrt_device *d = xrt_client_device(c, 0);
    assert_int_equal(xrt_execute_async(twice, d, &b, 1, &next, 1, NULL, &done),
                     XRT_OK);
    assert_int_equal(xrt_event_on_ready(done, chain_cb, NULL), XRT_OK);
    if (i % 2) xrt_event_release(done); /* keep half of the events */
    b = next;
  }
  xrt_buffer *far = NULL;
  assert_int_equal(xrt_buffer_copy_to_device_async(b, xrt_client_device(c, 1),
                                                   &far), XRT_OK);
  xrt_event *rd = NULL;
  assert_int_equal(xrt_buffer_to_host_async(far, out, sizeof out, &rd),
                   XRT_OK);
  xrt_client_release(c);
  assert_int_equal(g_chain_done, N);
  /* 1,2,3,4 doubled 40 times: exact in f32 (a power-of-two scale). */
  for (int i = 0; i < 4; i++)
    assert_float_equal(out[i], ldexpf(in[i], N), 0);
}

static const char kReplicated[] =
    "module @m attributes {mhlo.num_replicas = 2 : i32} {\n"
    "  func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> "
    "(tensor<4xf32>, tensor<4xf32>) {\n"
    "    %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "    %1 = stablehlo.multiply %a, %b : tensor<4xf32>\n"
    "    func.return %0, %1 : tensor<4xf32>, tensor<4xf32>\n"
    "  }\n"
    "}\n";

static void test_execute_multi(void **state) {
  (void)state;
  xrt_client *c = new_client(3);
  /* 2 replicas, from the module */
  xrt_executable *e = tu_compile(c, kReplicated, 0, NULL);
  assert_int_equal(xrt_executable_num_replicas(e), 2);
  assert_int_equal(xrt_executable_num_partitions(e), 1);
  assert_ptr_equal(xrt_executable_device(e, 1), xrt_client_device(c, 1));
  assert_null(xrt_executable_device(e, 2));
  float a[2][4] = {{1, 2, 3, 4}, {-1, 0.5f, 8, 9}};
  float b[2][4] = {{10, 20, 30, 40}, {2, 2, 2, 2}};
  /* Reversed assignment: logical 0 on device 2, logical 1 on device 0. */
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  int assign[2] = {2, 0};
  co.device_assignment = assign;
  xrt_executable *er = NULL;
  assert_int_equal(xrt_compile(c, kReplicated, strlen(kReplicated), &co, &er),
                   XRT_OK);
  for (int variant = 0; variant < 2; variant++) {
    xrt_executable *x = variant ? er : e;
    int dev[2] = {variant ? 2 : 0, variant ? 0 : 1};
    xrt_buffer *args[2][2], *outs[2][2] = {{NULL}};
    for (int i = 0; i < 2; i++) {
      args[i][0] = upload(c, dev[i], a[i]);
      args[i][1] = upload(c, dev[i], b[i]);
    }
    xrt_buffer *const *lists[2] = {args[0], args[1]};
    xrt_buffer **olists[2] = {outs[0], outs[1]};
    xrt_event *done = NULL;
    assert_int_equal(xrt_execute_multi(x, lists, 2, 2, olists, 2, NULL, &done),
                     XRT_OK);
    assert_int_equal(xrt_event_await(done), XRT_OK);
    for (int i = 0; i < 2; i++) {
      float sum[4], prod[4];
      for (int k = 0; k < 4; k++) {
        sum[k] = a[i][k] + b[i][k];
        prod[k] = a[i][k] * b[i][k];
      }
      assert_ptr_equal(xrt_buffer_device(outs[i][0]),
                       xrt_client_device(c, dev[i]));
      assert_buffer(outs[i][0], sum);
      assert_buffer(outs[i][1], prod);
    }
    xrt_event_release(done);
  }
  /* A launch whose inputs are pending (behind the gate) goes through the
   * queues; one whose input is poisoned fails with the original error. */
  xrt_executable *gated = tu_compile(c, kGated, 0, NULL);
  xrt_executable *boom = tu_compile(c, kBoom, 0, NULL);
  xrt_buffer *g0 = upload(c, 0, a[0]), *g1 = upload(c, 1, a[1]);
  xrt_buffer *pa0 = NULL, *pb1 = NULL, *bb0 = upload(c, 0, b[0]);
  xrt_buffer *bb1 = upload(c, 1, b[1]);
  gate_close();
  assert_int_equal(xrt_execute_async(gated, xrt_client_device(c, 0), &g0, 1,
                                     &pa0, 1, NULL, NULL), XRT_OK);
  assert_int_equal(xrt_execute_async(boom, xrt_client_device(c, 1), &g1, 1,
                                     &pb1, 1, NULL, NULL), XRT_OK);
  xrt_buffer *q0[2] = {pa0, bb0}, *q1[2] = {g1, bb1}, *qo[2][2] = {{NULL}};
  xrt_buffer *const *ql[2] = {q0, q1};
  xrt_buffer **qol[2] = {qo[0], qo[1]};
  xrt_event *qdone = NULL;
  assert_int_equal(xrt_execute_multi(e, ql, 2, 2, qol, 2, NULL, &qdone),
                   XRT_OK);
  assert_false(xrt_event_is_ready(qdone));
  gate_open();
  assert_int_equal(xrt_event_await(qdone), XRT_OK);
  float sum0[4], sum1[4];
  for (int k = 0; k < 4; k++) {
    sum0[k] = (a[0][k] + 1) + b[0][k];
    sum1[k] = a[1][k] + b[1][k];
  }
  assert_buffer(qo[0][0], sum0);
  assert_buffer(qo[1][0], sum1);
  xrt_event_release(qdone);
  xrt_buffer *p1[2] = {pb1, bb1}, *po[2][2] = {{NULL}};
  xrt_buffer *const *pl[2] = {q0, p1};
  xrt_buffer **pol[2] = {po[0], po[1]};
  assert_int_equal(xrt_execute_multi(e, pl, 2, 2, pol, 2, NULL, &qdone),
                   XRT_OK);
  assert_int_equal(xrt_event_await(qdone), XRT_ABORTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 0: ");
  TU_ASSERT_CONTAINS(xrt_last_error(), "boom from the host");
  float junk[4];
  assert_int_equal(xrt_buffer_to_host(po[1][1], junk, sizeof junk),
                   XRT_ABORTED);
  xrt_event_release(qdone);
  /* Synchronous single-device execute of a 2-replica executable. */
  xrt_buffer *x0 = upload(c, 0, a[0]), *o[2] = {NULL, NULL};
  xrt_buffer *two[2] = {x0, x0};
  assert_int_equal(xrt_execute(e, xrt_client_device(c, 0), two, 2, o, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_execute_multi");
  xrt_client_release(c);
}

/* Two programs in one launch (MPMD): same launch id, one participant each. */
static void test_mpmd_launch(void **state) {
  (void)state;
  xrt_client *c = new_client(2);
  xrt_executable *p0 = tu_compile(c, kTwice, 2, NULL);
  xrt_executable *p1 = tu_compile(c, kGated, 2, NULL);
  float in0[4] = {1, 2, 3, 4}, in1[4] = {5, 6, 7, 8};
  float w0[4] = {2, 4, 6, 8}, w1[4] = {6, 7, 8, 9};
  xrt_buffer *x0 = upload(c, 0, in0), *x1 = upload(c, 1, in1);
  xrt_buffer *y0 = NULL, *y1 = NULL;
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  o.launch_id = xrt_client_new_launch_id(c);
  assert_true(o.launch_id != 0);
  assert_true(xrt_client_new_launch_id(c) != o.launch_id);
  gate_open();
  xrt_event *d0 = NULL, *d1 = NULL;
  o.replica = 0;
  assert_int_equal(xrt_execute_async(p0, xrt_client_device(c, 0), &x0, 1, &y0,
                                     1, &o, &d0), XRT_OK);
  o.replica = 1;
  assert_int_equal(xrt_execute_async(p1, xrt_client_device(c, 1), &x1, 1, &y1,
                                     1, &o, &d1), XRT_OK);
  assert_int_equal(xrt_event_await(d0), XRT_OK);
  assert_int_equal(xrt_event_await(d1), XRT_OK);
  assert_buffer(y0, w0);
  assert_buffer(y1, w1);
  /* The participant must run on its device, inside the launch. */
  xrt_buffer *bad = NULL;
  o.replica = 1;
  assert_int_equal(xrt_execute_async(p0, xrt_client_device(c, 0), &x0, 1,
                                     &bad, 1, &o, NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "runs on device 1, not on device 0");
  o.replica = 2;
  assert_int_equal(xrt_execute_async(p0, xrt_client_device(c, 0), &x0, 1,
                                     &bad, 1, &o, NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "replica 2");
  assert_null(bad);
  xrt_event_release(d0);
  xrt_event_release(d1);
  xrt_client_release(c);
}

static void expect_multi_fails(xrt_executable *e, xrt_buffer *const *const *l,
                               int num_lists, int num_args,
                               const xrt_execute_options *o, const char *sub) {
  xrt_buffer *outs[4][2] = {{NULL}};
  xrt_buffer **olists[4] = {outs[0], outs[1], outs[2], outs[3]};
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_multi(e, l, num_lists, num_args, olists, 2, o,
                                     &done), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), sub);
  assert_null(done);
  for (int i = 0; i < 4; i++) assert_null(outs[i][0]);
}

static void test_multi_bad_input(void **state) {
  (void)state;
  xrt_client *c = new_client(2), *other = new_client(2);
  xrt_executable *e = tu_compile(c, kReplicated, 0, NULL);
  float v[4] = {1, 2, 3, 4};
  xrt_buffer *a0 = upload(c, 0, v), *b0 = upload(c, 0, v);
  xrt_buffer *a1 = upload(c, 1, v), *b1 = upload(c, 1, v);
  xrt_buffer *foreign = upload(other, 1, v), *wrong_dev = upload(c, 0, v);
  xrt_buffer *wide = NULL, *ints = NULL;
  float v8[8] = {0};
  int32_t i4[4] = {1, 2, 3, 4};
  xrt_shape s8 = {XRT_F32, 1, {8}}, si = {XRT_S32, 1, {4}};
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 1), &s8, v8,
                                        &wide), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 1), &si, i4,
                                        &ints), XRT_OK);
  xrt_buffer *l0[2] = {a0, b0}, *l1[2] = {a1, b1};
  xrt_buffer *const *lists[2] = {l0, l1};
  /* Wrong number of lists; more devices than the client has. */
  expect_multi_fails(e, lists, 1, 2, NULL, "num_lists is 1");
  xrt_buffer *const *three[3] = {l0, l1, l1};
  expect_multi_fails(e, three, 3, 2, NULL, "only 2 device(s)");
  /* Argument count, shape, type, device and client differing by list. */
  expect_multi_fails(e, lists, 2, 1, NULL, "takes 2 argument(s), got 1");
  xrt_buffer *shape_bad[2] = {a1, wide};
  xrt_buffer *const *l_shape[2] = {l0, shape_bad};
  expect_multi_fails(e, l_shape, 2, 2, NULL,
                     "argument list 1, argument 1 is tensor<8xf32>");
  xrt_buffer *type_bad[2] = {ints, b1};
  xrt_buffer *const *l_type[2] = {l0, type_bad};
  expect_multi_fails(e, l_type, 2, 2, NULL,
                     "argument list 1, argument 0 is tensor<4xi32>");
  xrt_buffer *dev_bad[2] = {a1, wrong_dev};
  xrt_buffer *const *l_dev[2] = {l0, dev_bad};
  expect_multi_fails(e, l_dev, 2, 2, NULL,
                     "argument list 1, argument 1 lives on device 0");
  xrt_buffer *client_bad[2] = {a0, foreign};
  xrt_buffer *const *l_client[2] = {client_bad, l1};
  expect_multi_fails(e, l_client, 2, 2, NULL,
                     "argument list 0, argument 1 is not a live buffer");
  xrt_buffer *const *l_null[2] = {l0, NULL};
  expect_multi_fails(e, l_null, 2, 2, NULL, "argument list 1 is NULL");
  /* Devices: duplicated, or of another client. */
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  xrt_device *same[2] = {xrt_client_device(c, 0), xrt_client_device(c, 0)};
  o.devices = same;
  xrt_buffer *const *l00[2] = {l0, l0};
  expect_multi_fails(e, l00, 2, 2, &o, "are both device 0");
  xrt_device *alien[2] = {xrt_client_device(c, 0),
                          xrt_client_device(other, 1)};
  o.devices = alien;
  expect_multi_fails(e, lists, 2, 2, &o, "options.devices[1]");
  /* Compile-time launch shapes. */
  xrt_compile_options co;
  xrt_executable *x = NULL;
  xrt_compile_options_init(&co);
  co.num_replicas = 3;
  assert_int_equal(xrt_compile(c, kAdd, strlen(kAdd), &co, &x),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "the client has 2");
  co.num_replicas = -1;
  assert_int_equal(xrt_compile(c, kAdd, strlen(kAdd), &co, &x),
                   XRT_INVALID_ARGUMENT);
  int dup[2] = {1, 1}, out_of_range[2] = {0, 2};
  co.num_replicas = 2;
  co.device_assignment = dup;
  assert_int_equal(xrt_compile(c, kAdd, strlen(kAdd), &co, &x),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "both device 1");
  co.device_assignment = out_of_range;
  assert_int_equal(xrt_compile(c, kAdd, strlen(kAdd), &co, &x),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device_assignment[1] is 2");
  assert_null(x);
  /* Nothing was enqueued by the failures: the good launch still works. */
  xrt_buffer *outs[2][2] = {{NULL}};
  xrt_buffer **olists[2] = {outs[0], outs[1]};
  assert_int_equal(xrt_execute_multi(e, lists, 2, 2, olists, 2, NULL, NULL),
                   XRT_OK);
  float sum[4] = {2, 4, 6, 8};
  assert_buffer(outs[1][0], sum);
  /* Single-device misuse. */
  xrt_buffer *y = NULL;
  xrt_buffer *mixed[2] = {a0, a1};
  assert_int_equal(xrt_execute_async(tu_compile(c, kAdd, 0, NULL),
                                     xrt_client_device(c, 0), mixed, 2, &y, 1,
                                     NULL, NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 1 lives on device 1");
  assert_null(y);
  assert_int_equal(xrt_device_inject_fault(NULL, 0), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_event_await(NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_event_release(NULL), XRT_OK);
  xrt_client_release(other);
  xrt_client_release(c);
}

/* A fault injected on one device fails that execution's events with a
 * message naming the device; the device and every buffer stay usable. */
static void test_injected_fault(void **state) {
  (void)state;
  xrt_client *c = new_client(2);
  xrt_device *d1 = xrt_client_device(c, 1);
  xrt_executable *twice = tu_compile(c, kTwice, 0, NULL);
  xrt_executable *multi = tu_compile(c, kReplicated, 0, NULL);
  float in[4] = {1, 2, 3, 4}, want[4] = {2, 4, 6, 8}, junk[4];
  xrt_buffer *x = upload(c, 1, in), *y = NULL, *z = NULL;
  assert_int_equal(xrt_device_inject_fault(d1, -1), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_device_inject_fault(d1, 0), XRT_OK);
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_async(twice, d1, &x, 1, &y, 1, NULL, &done),
                   XRT_OK);
  assert_int_not_equal(xrt_event_await(done), XRT_OK);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device 1");
  assert_int_not_equal(xrt_buffer_to_host(y, junk, sizeof junk), XRT_OK);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device 1");
  xrt_event_release(done);
  /* The fault was one-shot: the device runs the next execution. */
  assert_int_equal(xrt_execute(twice, d1, &x, 1, &z, 1, NULL), XRT_OK);
  assert_buffer(z, want);
  assert_buffer(x, in);
  /* In a two-device launch the whole launch fails, naming the device. */
  xrt_buffer *a0 = upload(c, 0, in), *a1 = upload(c, 1, in);
  xrt_buffer *l0[2] = {a0, a0}, *l1[2] = {a1, a1}, *o[2][2] = {{NULL}};
  xrt_buffer *const *lists[2] = {l0, l1};
  xrt_buffer **olists[2] = {o[0], o[1]};
  assert_int_equal(xrt_device_inject_fault(d1, 0), XRT_OK);
  assert_int_equal(xrt_execute_multi(multi, lists, 2, 2, olists, 2, NULL,
                                     &done), XRT_OK);
  assert_int_not_equal(xrt_event_await(done), XRT_OK);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device 1");
  assert_int_not_equal(xrt_buffer_to_host(o[1][0], junk, sizeof junk), XRT_OK);
  xrt_event_release(done);
  assert_buffer(a1, in);
  xrt_client_release(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_async_round_trip),
      cmocka_unit_test(test_async_execute_and_callbacks),
      cmocka_unit_test(test_error_propagation),
      cmocka_unit_test(test_release_while_pending),
      cmocka_unit_test(test_release_frees_before_completion),
      cmocka_unit_test(test_client_release_with_pending_work),
      cmocka_unit_test(test_execute_multi),
      cmocka_unit_test(test_mpmd_launch),
      cmocka_unit_test(test_multi_bad_input),
      cmocka_unit_test(test_injected_fault),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
