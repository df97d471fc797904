/*
 * test_dispatch.c - the single-device dispatch path and the object reuse
 * behind it: buffer and executable objects are recycled (keeping their
 * handle slot, with a new generation), each thread keeps one dead buffer
 * aside per client, and lookups take references without a lock.  Stale
 * handles of recycled objects must keep failing cleanly, also while other
 * threads recycle; recycled outputs must carry their new shape and data.
 * Expected values are computed here.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>

static const char kAdd4[] =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* Two results of other shapes than kAdd4's, so a recycled object must
 * take its new shape. */
static const char kSplit[] =
    "func.func @main(%a: tensor<4xf32>) -> (tensor<2xf32>, tensor<2x2xf32>) {\n"
    "  %0 = stablehlo.slice %a [0:2] : (tensor<4xf32>) -> tensor<2xf32>\n"
    "  %1 = stablehlo.reshape %a : (tensor<4xf32>) -> tensor<2x2xf32>\n"
    "  func.return %0, %1 : tensor<2xf32>, tensor<2x2xf32>\n"
    "}\n";

static const char kNeg3[] =
    "func.func @main(%a: tensor<3xi32>) -> tensor<3xi32> {\n"
    "  %0 = stablehlo.negate %a : tensor<3xi32>\n"
    "  func.return %0 : tensor<3xi32>\n"
    "}\n";

static xrt_buffer *upload_f32(xrt_client *c, const float *v, int64_t n) {
  xrt_shape s = TU_SHAPE(XRT_F32, n);
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, v, &b),
                   XRT_OK);
  return b;
}

static void assert_shape_is(xrt_buffer *b, xrt_shape want) {
  xrt_shape got;
  assert_int_equal(xrt_buffer_shape(b, &got), XRT_OK);
  assert_int_equal(got.dtype, want.dtype);
  assert_int_equal(got.rank, want.rank);
  for (int i = 0; i < want.rank; i++) assert_int_equal(got.dims[i], want.dims[i]);
}

/* Many dispatches in a row, alternating two executables whose outputs
 * differ in count and shape: every output (a recycled object after the
 * first rounds) has the right shape, size and values. */
static void test_repeated_dispatch_recycles_outputs(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *d = xrt_client_device(c, 0);
  xrt_executable *add = NULL, *split = NULL;
  assert_int_equal(xrt_compile(c, kAdd4, strlen(kAdd4), NULL, &add), XRT_OK);
  assert_int_equal(xrt_compile(c, kSplit, strlen(kSplit), NULL, &split),
                   XRT_OK);
  for (int r = 0; r < 200; r++) {
    float a[4], b[4], want[4], got[4];
    for (int i = 0; i < 4; i++) {
      a[i] = (float)(r * 4 + i);
      b[i] = (float)(1000 - r + i * 0.5);
      want[i] = a[i] + b[i];
    }
    xrt_buffer *args[2] = {upload_f32(c, a, 4), upload_f32(c, b, 4)};
    xrt_buffer *out = NULL, *outs2[2] = {NULL, NULL};
    assert_int_equal(xrt_execute(add, d, args, 2, &out, 1, NULL), XRT_OK);
    assert_shape_is(out, TU_SHAPE(XRT_F32, 4));
    assert_int_equal(xrt_buffer_bytes(out), 16);
    assert_int_equal(xrt_buffer_to_host(out, got, sizeof got), XRT_OK);
    assert_memory_equal(got, want, sizeof want);
    assert_int_equal(xrt_buffer_release(out), XRT_OK);
    assert_int_equal(xrt_execute(split, d, &args[1], 1, outs2, 2, NULL),
                     XRT_OK);
    assert_shape_is(outs2[0], TU_SHAPE(XRT_F32, 2));
    assert_shape_is(outs2[1], TU_SHAPE(XRT_F32, 2, 2));
    assert_int_equal(xrt_buffer_bytes(outs2[0]), 8);
    assert_int_equal(xrt_buffer_to_host(outs2[0], got, 8), XRT_OK);
    assert_memory_equal(got, b, 8);
    assert_int_equal(xrt_buffer_to_host(outs2[1], got, 16), XRT_OK);
    assert_memory_equal(got, b, 16);
    for (int i = 0; i < 2; i++) {
      assert_int_equal(xrt_buffer_release(outs2[i]), XRT_OK);
      assert_int_equal(xrt_buffer_release(args[i]), XRT_OK);
    }
  }
  assert_int_equal(xrt_executable_release(add), XRT_OK);
  assert_int_equal(xrt_executable_release(split), XRT_OK);
}

/* A released buffer's handle stays dead after its object is reused: the
 * next buffer (the same object) gets a different handle, and every old
 * handle keeps failing while the object goes through many lives. */
static void test_stale_buffer_handles_after_reuse(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *d = xrt_client_device(c, 0);
  enum { LIVES = 64 };
  xrt_buffer *old[LIVES];
  float v[4] = {1, 2, 3, 4}, got[4];
  for (int i = 0; i < LIVES; i++) {
    v[0] = (float)i;
    old[i] = upload_f32(c, v, 4);
    for (int j = 0; j < i; j++) assert_ptr_not_equal(old[i], old[j]);
    assert_int_equal(xrt_buffer_to_host(old[i], got, sizeof got), XRT_OK);
    assert_true(got[0] == (float)i && got[3] == 4.0f);
    assert_int_equal(xrt_buffer_release(old[i]), XRT_OK);
  }
  xrt_buffer *live = upload_f32(c, v, 4);
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, kAdd4, strlen(kAdd4), NULL, &e), XRT_OK);
  for (int i = 0; i < LIVES; i++) {
    xrt_buffer *out = NULL, *args[2] = {live, old[i]};
    assert_int_equal(xrt_buffer_to_host(old[i], got, sizeof got),
                     XRT_INVALID_ARGUMENT);
    assert_int_equal(xrt_buffer_bytes(old[i]), 0);
    assert_null(xrt_buffer_device(old[i]));
    assert_int_equal(xrt_execute(e, d, args, 2, &out, 1, NULL),
                     XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(xrt_last_error(), "argument 1");
    assert_null(out);
    assert_int_equal(xrt_buffer_release(old[i]), XRT_INVALID_ARGUMENT);
  }
  /* The live buffer is untouched by all of that. */
  assert_int_equal(xrt_buffer_to_host(live, got, sizeof got), XRT_OK);
  assert_true(got[0] == (float)(LIVES - 1) && got[1] == 2.0f);
  assert_int_equal(xrt_buffer_release(live), XRT_OK);
  assert_int_equal(xrt_executable_release(e), XRT_OK);
}

/* A released executable's handle stays dead when its shell is reused by
 * the next compile, which must behave as its own program. */
static void test_stale_executable_after_reuse(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *d = xrt_client_device(c, 0);
  xrt_executable *add = NULL, *neg = NULL;
  assert_int_equal(xrt_compile(c, kAdd4, strlen(kAdd4), NULL, &add), XRT_OK);
  assert_int_equal(xrt_executable_release(add), XRT_OK);
  assert_int_equal(xrt_compile(c, kNeg3, strlen(kNeg3), NULL, &neg), XRT_OK);
  assert_ptr_not_equal(add, neg);
  assert_int_equal(xrt_executable_num_inputs(neg), 1);
  assert_int_equal(xrt_executable_num_inputs(add), -1);
  int32_t v[3] = {5, -7, 0}, got[3];
  xrt_shape s = TU_SHAPE(XRT_S32, 3);
  xrt_buffer *b = NULL, *out = NULL;
  assert_int_equal(xrt_buffer_from_host(c, d, &s, v, &b), XRT_OK);
  assert_int_equal(xrt_execute(add, d, &b, 1, &out, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "executable");
  assert_null(out);
  assert_int_equal(xrt_execute(neg, d, &b, 1, &out, 1, NULL), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(out, got, sizeof got), XRT_OK);
  for (int i = 0; i < 3; i++) assert_int_equal(got[i], -v[i]);
  assert_int_equal(xrt_executable_release(add), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_executable_release(neg), XRT_OK);
  assert_int_equal(xrt_executable_release(neg), XRT_INVALID_ARGUMENT);
  xrt_buffer_release(out);
  xrt_buffer_release(b);
}

/* A compile that fails on a reused shell leaves it reusable, and the old
 * handle dead. */
static void test_failed_compile_on_reused_shell(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_executable *e = NULL, *bad = NULL, *again = NULL;
  static const char kBad[] =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<3xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n";
  static const char kCall[] =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.custom_call @no_such_target(%a) : "
      "(tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n";
  assert_int_equal(xrt_compile(c, kAdd4, strlen(kAdd4), NULL, &e), XRT_OK);
  assert_int_equal(xrt_executable_release(e), XRT_OK);
  assert_int_not_equal(xrt_compile(c, kBad, strlen(kBad), NULL, &bad), XRT_OK);
  assert_null(bad);
  assert_int_not_equal(xrt_compile(c, kCall, strlen(kCall), NULL, &bad),
                       XRT_OK);
  assert_null(bad);
  assert_int_equal(xrt_compile(c, kAdd4, strlen(kAdd4), NULL, &again), XRT_OK);
  assert_int_equal(xrt_executable_num_inputs(e), -1);
  assert_int_equal(xrt_executable_num_inputs(again), 2);
  assert_int_equal(xrt_executable_release(again), XRT_OK);
}

/* A thread's spare buffer belongs to one client: after that client is
 * released, the same thread works on a new client (the spare of the dead
 * client must not be touched: ASan would see it). */
static void test_spare_buffer_outlives_its_client(void **state) {
  (void)state;
  float v[4] = {1.5f, 2.5f, 3.5f, 4.5f}, got[4];
  for (int round = 0; round < 3; round++) {
    xrt_client *c = NULL;
    assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
    xrt_buffer *b = upload_f32(c, v, 4);
    assert_int_equal(xrt_buffer_release(b), XRT_OK); /* becomes the spare */
    b = upload_f32(c, v, 4);                          /* reuses it */
    assert_int_equal(xrt_buffer_to_host(b, got, sizeof got), XRT_OK);
    assert_memory_equal(got, v, sizeof v);
    assert_int_equal(xrt_buffer_release(b), XRT_OK);
    xrt_client_release(c);
    /* Still dead, whatever the thread's spare slot holds. */
    assert_int_equal(xrt_buffer_to_host(b, got, sizeof got),
                     XRT_INVALID_ARGUMENT);
  }
}

/* ---- racing recycling against stale lookups ---- */

typedef struct race {
  xrt_client *client;
  xrt_executable *exe;
  xrt_buffer *stale[16]; /* released before the threads start */
  _Atomic int stop;
  _Atomic int failures;
} race;

/* Recycles buffer objects as fast as it can: each new buffer may be a
 * reborn object of a stale handle, with the data checked. */
static void *churn(void *arg) {
  race *r = (race *)arg;
  xrt_device *d = xrt_client_device(r->client, 0);
  for (int i = 0; i < 400; i++) {
    float a[4] = {(float)i, 1, 2, 3}, b[4] = {1, 1, 1, (float)-i}, got[4];
    xrt_buffer *args[2] = {upload_f32(r->client, a, 4),
                           upload_f32(r->client, b, 4)};
    xrt_buffer *out = NULL;
    if (xrt_execute(r->exe, d, args, 2, &out, 1, NULL) != XRT_OK ||
        xrt_buffer_to_host(out, got, sizeof got) != XRT_OK ||
        got[0] != (float)i + 1 || got[1] != 2 || got[3] != 3 - (float)i)
      atomic_fetch_add(&r->failures, 1);
    xrt_buffer_release(out);
    xrt_buffer_release(args[0]);
    xrt_buffer_release(args[1]);
  }
  atomic_store(&r->stop, 1);
  return NULL;
}

/* Uses stale handles while their objects are reborn (at least 200 rounds,
 * then until the churn ends): always refused. */
static void *probe(void *arg) {
  race *r = (race *)arg;
  xrt_device *d = xrt_client_device(r->client, 0);
  float got[4];
  for (int n = 0; n < 200 || !atomic_load(&r->stop); n++) {
    for (int i = 0; i < 16; i++) {
      xrt_buffer *out = NULL, *args[2] = {r->stale[i], r->stale[15 - i]};
      if (xrt_buffer_to_host(r->stale[i], got, sizeof got) !=
              XRT_INVALID_ARGUMENT ||
          xrt_execute(r->exe, d, args, 2, &out, 1, NULL) !=
              XRT_INVALID_ARGUMENT ||
          out != NULL || xrt_buffer_release(r->stale[i]) !=
                             XRT_INVALID_ARGUMENT)
        atomic_fetch_add(&r->failures, 1);
    }
  }
  return NULL;
}

static void test_stale_lookups_race_recycling(void **state) {
  xrt_client *c = (xrt_client *)*state;
  race r;
  memset(&r, 0, sizeof r);
  r.client = c;
  assert_int_equal(xrt_compile(c, kAdd4, strlen(kAdd4), NULL, &r.exe), XRT_OK);
  float v[4] = {0, 0, 0, 0};
  for (int i = 0; i < 16; i++) r.stale[i] = upload_f32(c, v, 4);
  for (int i = 0; i < 16; i++)
    assert_int_equal(xrt_buffer_release(r.stale[i]), XRT_OK);
  pthread_t t[3];
  assert_int_equal(pthread_create(&t[0], NULL, churn, &r), 0);
  assert_int_equal(pthread_create(&t[1], NULL, probe, &r), 0);
  assert_int_equal(pthread_create(&t[2], NULL, probe, &r), 0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  assert_int_equal(atomic_load(&r.failures), 0);
  assert_int_equal(xrt_executable_release(r.exe), XRT_OK);
}

/* Buffers made on one thread and released on another: the releasing
 * thread's spare then serves its own dispatches, with correct data. */
typedef struct handoff {
  xrt_client *client;
  xrt_buffer *bufs[32];
  int failures;
} handoff;

static void *release_and_reuse(void *arg) {
  handoff *h = (handoff *)arg;
  xrt_device *d = xrt_client_device(h->client, 0);
  xrt_shape s = TU_SHAPE(XRT_F32, 4);
  for (int i = 0; i < 32; i++) {
    if (xrt_buffer_release(h->bufs[i]) != XRT_OK) h->failures++;
    float v[4] = {(float)i, (float)(2 * i), 0, 1}, got[4];
    xrt_buffer *b = NULL;
    if (xrt_buffer_from_host(h->client, d, &s, v, &b) != XRT_OK ||
        xrt_buffer_to_host(b, got, sizeof got) != XRT_OK ||
        memcmp(got, v, sizeof v) != 0)
      h->failures++;
    xrt_buffer_release(b);
  }
  return NULL;
}

static void test_release_on_another_thread(void **state) {
  xrt_client *c = (xrt_client *)*state;
  handoff h;
  memset(&h, 0, sizeof h);
  h.client = c;
  float v[4] = {9, 8, 7, 6};
  for (int i = 0; i < 32; i++) h.bufs[i] = upload_f32(c, v, 4);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, release_and_reuse, &h), 0);
  pthread_join(t, NULL);
  assert_int_equal(h.failures, 0);
  for (int i = 0; i < 32; i++)
    assert_int_equal(xrt_buffer_release(h.bufs[i]), XRT_INVALID_ARGUMENT);
}

/* Client release frees live, dead and spare objects alike (LeakSanitizer
 * checks under `make SAN=1 test`), and their handles die with it. */
static void test_client_release_frees_recycled_objects(void **state) {
  (void)state;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
  float v[4] = {1, 2, 3, 4}, got[4];
  xrt_buffer *keep[8], *gone[40];
  for (int i = 0; i < 40; i++) gone[i] = upload_f32(c, v, 4);
  for (int i = 0; i < 8; i++) keep[i] = upload_f32(c, v, 4);
  for (int i = 0; i < 40; i++) xrt_buffer_release(gone[i]);
  xrt_executable *e = NULL, *e2 = NULL;
  assert_int_equal(xrt_compile(c, kAdd4, strlen(kAdd4), NULL, &e), XRT_OK);
  assert_int_equal(xrt_compile(c, kNeg3, strlen(kNeg3), NULL, &e2), XRT_OK);
  assert_int_equal(xrt_executable_release(e2), XRT_OK);
  xrt_client_release(c);
  for (int i = 0; i < 8; i++)
    assert_int_equal(xrt_buffer_to_host(keep[i], got, sizeof got),
                     XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_executable_num_inputs(e), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_repeated_dispatch_recycles_outputs,
                                      tu_setup_client, tu_teardown_client),
      cmocka_unit_test_setup_teardown(test_stale_buffer_handles_after_reuse,
                                      tu_setup_client, tu_teardown_client),
      cmocka_unit_test_setup_teardown(test_stale_executable_after_reuse,
                                      tu_setup_client, tu_teardown_client),
      cmocka_unit_test_setup_teardown(test_failed_compile_on_reused_shell,
                                      tu_setup_client, tu_teardown_client),
      cmocka_unit_test(test_spare_buffer_outlives_its_client),
      cmocka_unit_test_setup_teardown(test_stale_lookups_race_recycling,
                                      tu_setup_client, tu_teardown_client),
      cmocka_unit_test_setup_teardown(test_release_on_another_thread,
                                      tu_setup_client, tu_teardown_client),
      cmocka_unit_test(test_client_release_frees_recycled_objects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
