/*
 * test_faults.c - device faults injected by kind (kernel, transfer,
 * collective, allocation; xrt_device_inject_fault_kind) on one device of a
 * four-device client, at every position of a workflow:
 *  - a chain of asynchronous work (upload, two executions, a copy to
 *    another device, an execution there) on device 1: the fault fails the
 *    op it hits and every later stage of the chain (which all depend on
 *    it), with a message naming the device and the op, and leaves the
 *    earlier stages valid with their values;
 *  - two collective launches across the four devices: a fault on device 2
 *    fails every participant of the launch it hits (and the launch that
 *    reads its outputs), not the launch before;
 * and in every case a buffer and a variable the fault did not touch, and
 * a chain running meanwhile on device 3, stay readable with their values,
 * and the same workflow then runs again cleanly on the same devices.
 * Expected values come from reference loops in this file.
 */
#include "test_util.h"

#define NDEV 4
#define N 8         /* elements of a chain buffer */
#define NV 16       /* elements of the variable and of a launch's array */
#define NSTAGE 5    /* stages of the chain */

/* f(x)[i] = 2 * x[7 - i] + 1, in three kernels (multiply, reverse, add)
 * so that a kernel fault can hit the middle of an execution. */
static const char *kStep =
    "func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
    "  %two = stablehlo.constant dense<2.0> : tensor<8xf32>\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<8xf32>\n"
    "  %0 = stablehlo.multiply %x, %two : tensor<8xf32>\n"
    "  %1 = stablehlo.reverse %0, dims = [0] : tensor<8xf32>\n"
    "  %2 = stablehlo.add %1, %one : tensor<8xf32>\n"
    "  return %2 : tensor<8xf32>\n"
    "}\n";

/* Two collectives per participant: r = sum over the replicas of a, then
 * out = sum over the replicas of r * a (= r * r). */
static const char *kColl =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = stablehlo.add %x, %y : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "    : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %m = stablehlo.multiply %r, %a : tensor<4xf32>\n"
    "  %q = \"stablehlo.all_reduce\"(%m) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = stablehlo.add %x, %y : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "    : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %q : tensor<4xf32>\n"
    "}\n";

static const int kIds[NDEV] = {0, 1, 2, 3};

/* What one scenario shares: the client, the executables, and the objects
 * no fault may touch. */
typedef struct fx {
  xrt_client *c;
  xrt_device *d[NDEV];
  xrt_executable *step, *coll;
  float x[N], var_data[NV];
  xrt_buffer *keep;  /* on device 1 before the fault; never read by it */
  xrt_variable *var; /* chunked over the four devices */
} fx;

static void ref_step(const float *in, float *out) {
  for (int i = 0; i < N; i++) out[i] = 2.0f * in[N - 1 - i] + 1.0f;
}

/* The launch's output for a chunked input a[NV]: piece p is 4 values. */
static void ref_coll(const float *a, float *out) {
  for (int i = 0; i < 4; i++) {
    float r = 0, q = 0;
    for (int p = 0; p < NDEV; p++) r += a[4 * p + i];
    for (int p = 0; p < NDEV; p++) q += r * a[4 * p + i];
    for (int p = 0; p < NDEV; p++) out[4 * p + i] = q;
  }
}

static void fx_open(fx *f) {
  memset(f, 0, sizeof *f);
  f->c = tu_client(NDEV, 1, 0);
  for (int k = 0; k < NDEV; k++) f->d[k] = xrt_client_device(f->c, k);
  f->step = tu_compile(f->c, kStep, 0, NULL);
  f->coll = tu_compile(f->c, kColl, NDEV, kIds);
  for (int i = 0; i < N; i++) f->x[i] = (float)(i + 1) * 0.5f;
  for (int i = 0; i < NV; i++) f->var_data[i] = (float)(3 * i - 7);
  xrt_shape sh = TU_SHAPE(XRT_F32, N);
  assert_int_equal(xrt_buffer_from_host(f->c, f->d[1], &sh, f->x, &f->keep),
                   XRT_OK);
  xrt_shape vs = TU_SHAPE(XRT_F32, NV);
  xrt_sharding_spec ch = tu_spec_chunked(1, 0, NDEV);
  xrt_variable_format fmt = {&ch, f->d, NDEV};
  assert_int_equal(
      xrt_variable_create(f->c, "w", &vs, f->var_data, &fmt, &f->var), XRT_OK);
}

static void fx_close(fx *f) {
  xrt_buffer_release(f->keep);
  xrt_variable_release(f->var);
  xrt_executable_release(f->step);
  xrt_executable_release(f->coll);
  xrt_client_release(f->c);
}

/* The untouched objects still hold their values. */
static void fx_check_untouched(fx *f) {
  float got[NV];
  assert_int_equal(xrt_buffer_to_host(f->keep, got, N * sizeof(float)),
                   XRT_OK);
  assert_memory_equal(got, f->x, N * sizeof(float));
  assert_int_equal(xrt_variable_to_host(f->var, got, sizeof got), XRT_OK);
  assert_memory_equal(got, f->var_data, sizeof got);
}

/* The outcome of one stage: the status of its ready event (or of the call
 * that enqueued it), its message, and its buffer (NULL when the call
 * failed or an earlier stage's call did). */
typedef struct stage {
  xrt_status st;
  char msg[1024];
  xrt_buffer *buf;
} stage;

static void stage_settle(stage *s) {
  if (!s->buf) return;
  xrt_event *ev = NULL;
  assert_int_equal(xrt_buffer_ready_event(s->buf, &ev), XRT_OK);
  s->st = xrt_event_await(ev);
  snprintf(s->msg, sizeof s->msg, "%s", s->st ? xrt_last_error() : "");
  xrt_event_release(ev);
}

static void stage_call(stage *s, xrt_status st) {
  s->st = st;
  snprintf(s->msg, sizeof s->msg, "%s", st ? xrt_last_error() : "");
}

/* Enqueues the chain without waiting: upload to device 1, f twice there,
 * copy to device 2, f there; each stage reads the previous one.  A stage
 * whose call fails ends the chain (later ones keep st = XRT_CANCELLED). */
static void chain_run(fx *f, stage *s) {
  for (int k = 0; k < NSTAGE; k++) {
    s[k].st = XRT_CANCELLED;
    s[k].msg[0] = 0;
    s[k].buf = NULL;
  }
  xrt_shape sh = TU_SHAPE(XRT_F32, N);
  stage_call(&s[0], xrt_buffer_from_host_async(f->c, f->d[1], &sh, f->x,
                                               &s[0].buf, NULL));
  for (int k = 1; k < NSTAGE && s[k - 1].buf; k++) {
    if (k == 3)
      stage_call(&s[k], xrt_buffer_copy_to_device_async(s[k - 1].buf, f->d[2],
                                                        &s[k].buf));
    else
      stage_call(&s[k], xrt_execute_async(f->step, f->d[k < 3 ? 1 : 2],
                                          &s[k - 1].buf, 1, &s[k].buf, 1,
                                          NULL, NULL));
  }
  for (int k = 0; k < NSTAGE; k++) stage_settle(&s[k]);
}

static void chain_release(stage *s) {
  for (int k = 0; k < NSTAGE; k++) xrt_buffer_release(s[k].buf);
}

/* Stages before first_bad hold their reference values; stages from it on
 * failed with messages containing each of want (NULL-terminated), and so
 * does reading their buffers.  first_bad = NSTAGE: all succeeded. */
static void chain_check(fx *f, stage *s, int first_bad,
                        const char *const *want) {
  float v[NSTAGE][N], got[N];
  memcpy(v[0], f->x, sizeof v[0]);
  ref_step(v[0], v[1]);
  ref_step(v[1], v[2]);
  memcpy(v[3], v[2], sizeof v[3]);
  ref_step(v[3], v[4]);
  for (int k = 0; k < NSTAGE; k++) {
    if (k < first_bad) {
      if (s[k].st != XRT_OK)
        fail_msg("stage %d failed: %s: %s", k, xrt_strerror(s[k].st),
                 s[k].msg);
      assert_int_equal(xrt_buffer_to_host(s[k].buf, got, sizeof got), XRT_OK);
      for (int i = 0; i < N; i++) assert_float_equal(got[i], v[k][i], 0.0f);
      continue;
    }
    if (s[k].st == XRT_OK) fail_msg("stage %d succeeded", k);
    if (!s[k].buf && s[k].st == XRT_CANCELLED) continue; /* never enqueued */
    for (int w = 0; want[w]; w++) TU_ASSERT_CONTAINS(s[k].msg, want[w]);
    if (s[k].buf) {
      assert_int_equal(xrt_buffer_to_host(s[k].buf, got, sizeof got), s[k].st);
      for (int w = 0; want[w]; w++)
        TU_ASSERT_CONTAINS(xrt_last_error(), want[w]);
    }
  }
}

/* A chain on device 3 (upload, f) enqueued before the faulty one and
 * checked after it. */
typedef struct side {
  xrt_buffer *in, *out;
} side;

static void side_start(fx *f, side *sd) {
  xrt_shape sh = TU_SHAPE(XRT_F32, N);
  assert_int_equal(xrt_buffer_from_host_async(f->c, f->d[3], &sh, f->x,
                                              &sd->in, NULL), XRT_OK);
  assert_int_equal(xrt_execute_async(f->step, f->d[3], &sd->in, 1, &sd->out,
                                     1, NULL, NULL), XRT_OK);
}

static void side_check(side *sd, const float *x) {
  float want[N], got[N];
  ref_step(x, want);
  assert_int_equal(xrt_buffer_to_host(sd->out, got, sizeof got), XRT_OK);
  for (int i = 0; i < N; i++) assert_float_equal(got[i], want[i], 0.0f);
  xrt_buffer_release(sd->in);
  xrt_buffer_release(sd->out);
}

/* One chain scenario: arm kind/after on device dev, run the chain beside
 * a side chain, check the outcome, the untouched objects, then disarm and
 * run the chain cleanly. */
static void chain_case(fx *f, int dev, xrt_fault_kind kind, int64_t after,
                       int first_bad, const char *const *want) {
  side sd;
  side_start(f, &sd);
  assert_int_equal(xrt_device_inject_fault_kind(f->d[dev], kind, after),
                   XRT_OK);
  stage s[NSTAGE];
  chain_run(f, s);
  chain_check(f, s, first_bad, want);
  chain_release(s);
  side_check(&sd, f->x);
  fx_check_untouched(f);
  /* A fault that did not fire is cancelled; one that did was one-shot. */
  assert_int_equal(xrt_device_inject_fault_kind(f->d[dev], kind, -1), XRT_OK);
  chain_run(f, s);
  chain_check(f, s, NSTAGE, NULL);
  chain_release(s);
}

static void test_transfer_faults(void **state) {
  (void)state;
  fx f;
  fx_open(&f);
  /* Transfers touching device 1: the upload (0), the copy's source (1);
   * the next ones would be the test's own reads. */
  const char *up[] = {"device 1: injected transfer fault",
                      "host-to-device transfer", NULL};
  const char *cp[] = {"device 1: injected transfer fault",
                      "device copy (source)", NULL};
  const char *cpd[] = {"device 2: injected transfer fault",
                       "device copy (destination)", NULL};
  chain_case(&f, 1, XRT_FAULT_TRANSFER, 0, 0, up);
  chain_case(&f, 1, XRT_FAULT_TRANSFER, 1, 3, cp);
  /* Device 2's first transfer is the copy's destination. */
  chain_case(&f, 2, XRT_FAULT_TRANSFER, 0, 3, cpd);
  fx_close(&f);
}

static void test_kernel_faults(void **state) {
  (void)state;
  fx f;
  fx_open(&f);
  /* The next execution on device 1 is stage 1; it fails at its first or
   * second kernel, or (after = 3, past its kernels) not at all. */
  const char *k0[] = {"device 1: injected fault after 0 steps of @main",
                      "multiply kernel at <input>:4:8", NULL};
  const char *k1[] = {"device 1: injected fault after 1 steps of @main",
                      "reverse kernel at <input>:5:8", NULL};
  const char *k2[] = {"device 2: injected fault after 0 steps of @main",
                      "multiply kernel at <input>:4:8", NULL};
  chain_case(&f, 1, XRT_FAULT_KERNEL, 0, 1, k0);
  chain_case(&f, 1, XRT_FAULT_KERNEL, 1, 1, k1);
  chain_case(&f, 2, XRT_FAULT_KERNEL, 0, 4, k2);
  fx_close(&f);
}

static void test_alloc_faults(void **state) {
  (void)state;
  fx f;
  fx_open(&f);
  /* Allocations on device 1: the upload's (0), then each execution's
   * output (1, 2); device 2: the copy's (0), the execution's (1). */
  const char *a1[] = {"device 1: injected allocation fault",
                      "device memory allocation", NULL};
  const char *a2[] = {"device 2: injected allocation fault",
                      "device memory allocation", NULL};
  chain_case(&f, 1, XRT_FAULT_ALLOC, 0, 0, a1);
  chain_case(&f, 1, XRT_FAULT_ALLOC, 1, 1, a1);
  chain_case(&f, 1, XRT_FAULT_ALLOC, 2, 2, a1);
  chain_case(&f, 2, XRT_FAULT_ALLOC, 0, 3, a2);
  chain_case(&f, 2, XRT_FAULT_ALLOC, 1, 4, a2);
  fx_close(&f);
}

/* ---- collective launches ---- */

/* Launch 1 runs kColl over a chunked array on the four devices, launch 2
 * over launch 1's output.  bad: the first launch that must fail (0, 1, or
 * 2 for none); every piece of it and of launch 2 fails with want. */
static void coll_case(fx *f, int dev, xrt_fault_kind kind, int64_t after,
                      int bad, const char *const *want) {
  float a[NV], o1[NV], o2[NV], got[NV];
  for (int i = 0; i < NV; i++) a[i] = (float)((i * 5) % 7) - 2.0f;
  ref_coll(a, o1);
  ref_coll(o1, o2);
  xrt_shape vs = TU_SHAPE(XRT_F32, NV);
  xrt_sharding_spec ch = tu_spec_chunked(1, 0, NDEV);
  xrt_sharded_array *in = NULL, *out[2] = {NULL, NULL};
  assert_int_equal(
      xrt_sharded_array_from_host(f->c, &vs, a, &ch, f->d, NDEV, &in), XRT_OK);
  side sd;
  side_start(f, &sd);
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  const xrt_sharding_spec *specs[1] = {&ch};
  o.output_specs = specs;
  assert_int_equal(xrt_device_inject_fault_kind(f->d[dev], kind, after),
                   XRT_OK);
  assert_int_equal(xrt_execute_sharded(f->coll, &in, 1, &out[0], 1, &o, NULL),
                   XRT_OK);
  assert_int_equal(
      xrt_execute_sharded(f->coll, &out[0], 1, &out[1], 1, &o, NULL), XRT_OK);
  const float *ref[2] = {o1, o2};
  for (int l = 0; l < 2; l++) {
    if (l < bad) {
      assert_int_equal(xrt_sharded_array_to_host(out[l], got, sizeof got),
                       XRT_OK);
      for (int i = 0; i < NV; i++) assert_float_equal(got[i], ref[l][i], 0.0f);
      continue;
    }
    /* Every participant's piece fails, naming the faulty device. */
    for (int p = 0; p < NDEV; p++) {
      xrt_buffer *piece = xrt_sharded_array_shard(out[l], p);
      assert_non_null(piece);
      xrt_event *ev = NULL;
      assert_int_equal(xrt_buffer_ready_event(piece, &ev), XRT_OK);
      assert_int_not_equal(xrt_event_await(ev), XRT_OK);
      for (int w = 0; want[w]; w++)
        TU_ASSERT_CONTAINS(xrt_last_error(), want[w]);
      xrt_event_release(ev);
    }
    assert_int_not_equal(xrt_sharded_array_to_host(out[l], got, sizeof got),
                         XRT_OK);
    for (int w = 0; want[w]; w++) TU_ASSERT_CONTAINS(xrt_last_error(), want[w]);
  }
  side_check(&sd, f->x);
  fx_check_untouched(f);
  assert_int_equal(xrt_sharded_array_to_host(in, got, sizeof got), XRT_OK);
  assert_memory_equal(got, a, sizeof got);
  xrt_sharded_array_release(out[0]);
  xrt_sharded_array_release(out[1]);
  /* Disarmed: both launches run again on the same devices. */
  assert_int_equal(xrt_device_inject_fault_kind(f->d[dev], kind, -1), XRT_OK);
  out[0] = out[1] = NULL;
  assert_int_equal(xrt_execute_sharded(f->coll, &in, 1, &out[0], 1, &o, NULL),
                   XRT_OK);
  assert_int_equal(
      xrt_execute_sharded(f->coll, &out[0], 1, &out[1], 1, &o, NULL), XRT_OK);
  assert_int_equal(xrt_sharded_array_to_host(out[1], got, sizeof got), XRT_OK);
  for (int i = 0; i < NV; i++) assert_float_equal(got[i], o2[i], 0.0f);
  xrt_sharded_array_release(out[0]);
  xrt_sharded_array_release(out[1]);
  xrt_sharded_array_release(in);
}

static void test_collective_faults(void **state) {
  (void)state;
  fx f;
  fx_open(&f);
  /* Device 2 enters two all_reduces per launch: after = 0 and 1 hit
   * launch 1 (its first or second), 2 and 3 launch 2, 4 nothing. */
  const char *w[] = {"device 2: injected collective fault", "all_reduce at ",
                     NULL};
  coll_case(&f, 2, XRT_FAULT_COLLECTIVE, 0, 0, w);
  coll_case(&f, 2, XRT_FAULT_COLLECTIVE, 1, 0, w);
  coll_case(&f, 2, XRT_FAULT_COLLECTIVE, 2, 1, w);
  coll_case(&f, 2, XRT_FAULT_COLLECTIVE, 3, 1, w);
  coll_case(&f, 2, XRT_FAULT_COLLECTIVE, 4, 2, w);
  /* A kernel fault of one participant fails the whole launch too. */
  const char *k[] = {"device 2: injected fault after 1 steps of @main",
                     "multiply kernel at <input>:8:8", NULL};
  coll_case(&f, 2, XRT_FAULT_KERNEL, 1, 0, k);
  fx_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_transfer_faults),
      cmocka_unit_test(test_kernel_faults),
      cmocka_unit_test(test_alloc_faults),
      cmocka_unit_test(test_collective_faults),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
