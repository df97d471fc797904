/*
 * test_launch_oom.c - host memory running out on the device threads of a
 * multi-device launch.
 *
 * The allocation-failure walk (test_alloc_fail.c) counts every allocation,
 * so which device thread meets the failing one there depends on the
 * scheduling.  Here the allocator counts only allocations made off the
 * main thread (the device threads) after it is armed, so each of these
 * windows is hit on purpose: the launch record the first participant to
 * arrive makes (2 allocations), then each participant's scratch arena.
 * Whichever participant fails, every participant must finish (none may
 * wait in the all_reduce for one that will not come) and the launch must
 * fail with the cause, RESOURCE_EXHAUSTED, not a peer's ABORTED.  MPMD
 * launches, whose participants the caller starts one by one, must fail
 * the same way when the first one could not make the record and the
 * others come after it finished.
 */
#include <pthread.h>

#include "test_util.h"

#define NDEV 4

static const char *kAllReduce =
    "module @ar attributes {mhlo.num_replicas = 4 : i32} {\n"
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %r = \"stablehlo.all_reduce\"(%x) ({\n"
    "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "      %s = stablehlo.add %a, %b : tensor<f32>\n"
    "      stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "    : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %r : tensor<4xf32>\n"
    "}\n}\n";

/* Fails the fail_at-th allocation made off the main thread once armed (and
 * every later one when persistent); counts live blocks through the
 * counting allocator of test_util.h, which never fails here. */
typedef struct dev_alloc {
  tu_counting_alloc base;
  pthread_t main;
  _Atomic bool armed;
  _Atomic long calls; /* device-thread allocations since armed */
  long fail_at;
  bool persistent;
  _Atomic bool failed;
} dev_alloc;

static void *dev_alloc_fn(void *self, size_t size) {
  dev_alloc *a = (dev_alloc *)self;
  if (atomic_load(&a->armed) && !pthread_equal(pthread_self(), a->main)) {
    long call = atomic_fetch_add(&a->calls, 1) + 1;
    if (call == a->fail_at || (a->persistent && call > a->fail_at)) {
      atomic_store(&a->failed, true);
      return NULL;
    }
  }
  return tu_counting_alloc_fn(&a->base, size);
}

static void dev_free_fn(void *self, void *p) {
  tu_counting_free_fn(&((dev_alloc *)self)->base, p);
}

static void dev_alloc_init(dev_alloc *a, long fail_at, bool persistent) {
  memset(a, 0, sizeof *a);
  tu_counting_init(&a->base, 0);
  a->main = pthread_self();
  atomic_init(&a->armed, false);
  atomic_init(&a->calls, 0);
  atomic_init(&a->failed, false);
  a->fail_at = fail_at;
  a->persistent = persistent;
}

static xrt_client *dev_client(dev_alloc *a) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = NDEV;
  o.threads_per_device = 1;
  o.allocator = (xrt_allocator){a, dev_alloc_fn, dev_free_fn};
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("xrt_client_create: %s", xrt_last_error());
  return c;
}

/* x[d][i] = 10 d + i on device d. */
static void upload(xrt_client *c, xrt_buffer *in[NDEV], float x[NDEV][4]) {
  xrt_shape sh = TU_SHAPE(XRT_F32, 4);
  for (int d = 0; d < NDEV; d++) {
    for (int i = 0; i < 4; i++) x[d][i] = (float)(10 * d + i);
    assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, d), &sh,
                                          x[d], &in[d]),
                     XRT_OK);
  }
}

/* A failed launch must say it ran out of memory, and not as ABORTED. */
static void expect_exhausted(xrt_status s, const char *what, long k) {
  if (s != XRT_RESOURCE_EXHAUSTED)
    fail_msg("k=%ld: %s returned %s (%s), expected RESOURCE_EXHAUSTED", k,
             what, xrt_strerror(s), xrt_last_error());
  if (!strstr(xrt_last_error(), "memory"))
    fail_msg("k=%ld: %s: the message does not name the memory: '%s'", k,
             what, xrt_last_error());
}

/* One xrt_execute_multi of the all_reduce on a fresh client whose k-th
 * device-thread allocation fails; true when that allocation was made. */
static bool multi_run(long k, bool persistent) {
  dev_alloc a;
  dev_alloc_init(&a, k, persistent);
  xrt_client *c = dev_client(&a);
  xrt_executable *e = tu_compile(c, kAllReduce, 0, NULL);
  float x[NDEV][4];
  xrt_buffer *in[NDEV], *out[NDEV] = {NULL};
  upload(c, in, x);
  xrt_buffer *const lists[NDEV][1] = {{in[0]}, {in[1]}, {in[2]}, {in[3]}};
  xrt_buffer *const *alists[NDEV] = {lists[0], lists[1], lists[2], lists[3]};
  xrt_buffer **olists[NDEV] = {&out[0], &out[1], &out[2], &out[3]};
  xrt_event *done = NULL;
  atomic_store(&a.armed, true);
  assert_int_equal(xrt_execute_multi(e, alists, NDEV, 1, olists, 1, NULL,
                                     &done),
                   XRT_OK);
  xrt_status s = xrt_event_await(done); /* a hang here is the bug */
  atomic_store(&a.armed, false);
  bool failed = atomic_load(&a.failed);
  if (s != XRT_OK) {
    expect_exhausted(s, "xrt_execute_multi (await)", k);
  } else {
    float want[4], got[4];
    for (int i = 0; i < 4; i++)
      want[i] = x[0][i] + x[1][i] + x[2][i] + x[3][i];
    for (int d = 0; d < NDEV; d++) {
      assert_int_equal(xrt_buffer_to_host(out[d], got, sizeof got), XRT_OK);
      for (int i = 0; i < 4; i++) assert_true(got[i] == want[i]);
    }
  }
  if (!failed && s != XRT_OK)
    fail_msg("k=%ld: the launch failed with no allocation failed", k);
  xrt_event_release(done);
  for (int d = 0; d < NDEV; d++) {
    xrt_buffer_release(in[d]);
    xrt_buffer_release(out[d]);
  }
  xrt_executable_release(e);
  xrt_client_release(c);
  if (atomic_load(&a.base.live))
    fail_msg("k=%ld: %ld block(s) leaked", k, atomic_load(&a.base.live));
  return failed;
}

/* Fails each device-thread allocation of the launch in turn (the record's
 * two, then the participants' arenas) until one run makes no k-th. */
static void walk(bool persistent) {
  long k = 1;
  while (multi_run(k, persistent)) k++;
  /* At least the record (2) and one arena per participant. */
  assert_true(k > 2 + NDEV);
}

static void test_each_device_allocation_fails_once(void **state) {
  (void)state;
  walk(false);
}

static void test_device_allocations_fail_from_k_on(void **state) {
  (void)state;
  walk(true);
}

/* MPMD: participant 0 of each of `nlaunch` launches is queued alone on
 * device 0 while device-thread memory is out, so it cannot make the launch
 * record; then memory is back and the other participants come, one launch
 * after another.  The first 16 fail at once (the simulator remembers that
 * many such launches without allocating); participant 0 of a later one
 * must not fail where its peers would never learn of it, it waits for a
 * free slot, and then runs with memory back.  Each launch must either
 * fail in every participant with RESOURCE_EXHAUSTED or succeed in all. */
static void mpmd_first_fails(int nlaunch) {
  enum { MAXL = 32, REMEMBERED = 16 };
  dev_alloc a;
  dev_alloc_init(&a, 1, true);
  xrt_client *c = dev_client(&a);
  xrt_executable *e = tu_compile(c, kAllReduce, 0, NULL);
  float x[NDEV][4], want[4];
  xrt_buffer *in[NDEV];
  upload(c, in, x);
  for (int i = 0; i < 4; i++) want[i] = x[0][i] + x[1][i] + x[2][i] + x[3][i];
  uint64_t ids[MAXL];
  xrt_buffer *out[MAXL][NDEV] = {{NULL}};
  xrt_event *ev[MAXL][NDEV] = {{NULL}};
  assert_true(nlaunch <= MAXL);
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  atomic_store(&a.armed, true);
  for (int l = 0; l < nlaunch; l++) {
    ids[l] = xrt_client_new_launch_id(c);
    o.launch_id = ids[l];
    o.replica = 0;
    assert_int_equal(xrt_execute_async(e, xrt_client_device(c, 0), &in[0], 1,
                                       &out[l][0], 1, &o, &ev[l][0]),
                     XRT_OK);
  }
  for (int l = 0; l < nlaunch && l < REMEMBERED; l++)
    expect_exhausted(xrt_event_await(ev[l][0]), "participant 0", l);
  /* Gives a participant 0 beyond those a moment to fail (as it did before
   * it waited for a slot); no outcome is assumed. */
  if (nlaunch > REMEMBERED)
    (void)xrt_event_await_for(ev[REMEMBERED][0], 100 * 1000 * 1000);
  atomic_store(&a.armed, false);
  for (int l = 0; l < nlaunch; l++) {
    o.launch_id = ids[l];
    for (int d = 1; d < NDEV; d++) {
      o.replica = d;
      assert_int_equal(xrt_execute_async(e, xrt_client_device(c, d), &in[d],
                                         1, &out[l][d], 1, &o, &ev[l][d]),
                       XRT_OK);
    }
  }
  for (int l = 0; l < nlaunch; l++) {
    xrt_status s0 = xrt_event_await(ev[l][0]); /* a hang here is the bug */
    for (int d = 0; d < NDEV; d++) {
      xrt_status s = xrt_event_await(ev[l][d]);
      if (l < REMEMBERED || s0 != XRT_OK) {
        expect_exhausted(s, "a participant", l);
      } else {
        float got[4];
        assert_int_equal(s, XRT_OK);
        assert_int_equal(xrt_buffer_to_host(out[l][d], got, sizeof got),
                         XRT_OK);
        for (int i = 0; i < 4; i++) assert_true(got[i] == want[i]);
      }
      xrt_event_release(ev[l][d]);
      xrt_buffer_release(out[l][d]);
    }
  }
  /* The client still runs launches afterwards. */
  xrt_buffer *res[NDEV] = {NULL};
  xrt_buffer *const lists[NDEV][1] = {{in[0]}, {in[1]}, {in[2]}, {in[3]}};
  xrt_buffer *const *alists[NDEV] = {lists[0], lists[1], lists[2], lists[3]};
  xrt_buffer **olists[NDEV] = {&res[0], &res[1], &res[2], &res[3]};
  assert_int_equal(xrt_execute_multi(e, alists, NDEV, 1, olists, 1, NULL,
                                     NULL),
                   XRT_OK);
  for (int d = 0; d < NDEV; d++) {
    float got[4];
    assert_int_equal(xrt_buffer_to_host(res[d], got, sizeof got), XRT_OK);
    for (int i = 0; i < 4; i++) assert_true(got[i] == want[i]);
    xrt_buffer_release(res[d]);
  }
  for (int d = 0; d < NDEV; d++) xrt_buffer_release(in[d]);
  xrt_executable_release(e);
  xrt_client_release(c);
  assert_int_equal(atomic_load(&a.base.live), 0);
}

static void test_mpmd_first_participant_out_of_memory(void **state) {
  (void)state;
  mpmd_first_fails(1);
}

/* More launches in that state at once than the simulator remembers
 * without allocating. */
static void test_mpmd_many_launches_out_of_memory(void **state) {
  (void)state;
  mpmd_first_fails(20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_each_device_allocation_fails_once),
      cmocka_unit_test(test_device_allocations_fail_from_k_on),
      cmocka_unit_test(test_mpmd_first_participant_out_of_memory),
      cmocka_unit_test(test_mpmd_many_launches_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
