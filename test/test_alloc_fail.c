/*
 * test_alloc_fail.c - allocation-failure injection, as SQLite tests it.
 *
 * A client is given an allocator that fails its Nth allocation.  A whole
 * workflow (create the client, compile a program with a custom call and a
 * while loop, upload, execute, download) runs for N = 1, 2, ... until it
 * completes without hitting the failure.  At every N each call must either
 * succeed or fail cleanly with XRT_RESOURCE_EXHAUSTED, and everything must be
 * released (the allocator counts live blocks; ASan catches the rest).
 */
#include "test_util.h"

typedef struct counting_alloc {
  long calls;     /* allocations so far */
  long fail_at;   /* 1-based allocation that fails; 0 = never */
  long live;      /* blocks not yet freed */
  bool failed;    /* the injected failure happened */
} counting_alloc;

static void *ca_alloc(void *self, size_t size) {
  counting_alloc *a = (counting_alloc *)self;
  if (++a->calls == a->fail_at) {
    a->failed = true;
    return NULL;
  }
  void *p = malloc(size ? size : 1);
  if (p) a->live++;
  return p;
}

static void ca_free(void *self, void *p) {
  counting_alloc *a = (counting_alloc *)self;
  if (!p) return;
  a->live--;
  free(p);
}

static const char *kProgram =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %three = stablehlo.constant dense<3> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<4xf32>\n"
    "  cond {\n"
    "    %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  } do {\n"
    "    %n = stablehlo.add %i, %one : tensor<i32>\n"
    "    %d = stablehlo.add %acc, %acc : tensor<4xf32>\n"
    "    stablehlo.return %n, %d : tensor<i32>, tensor<4xf32>\n"
    "  }\n"
    "  %s = stablehlo.custom_call @twice(%r#1) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  func.return %s : tensor<4xf32>\n"
    "}\n";

static xrt_status twice(void *user, xrt_host_call *call) {
  (void)user;
  const float *in = (const float *)call->inputs[0].data;
  float *out = (float *)call->outputs[0].data;
  for (int i = 0; i < 4; i++) out[i] = 2 * in[i];
  return XRT_OK;
}

/* Accepts success, or the injected failure reported as such. */
static bool step_ok(xrt_status s, const counting_alloc *a) {
  if (s == XRT_OK) return true;
  if (s != XRT_RESOURCE_EXHAUSTED || !a->failed) {
    fail_msg("status %s (%s) at fail_at=%ld", xrt_strerror(s),
             xrt_last_error(), a->fail_at);
  }
  return false;
}

/* Runs the workflow once; true when every step succeeded. */
static bool workflow(counting_alloc *a) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 2;
  o.allocator.self = a;
  o.allocator.alloc = ca_alloc;
  o.allocator.free = ca_free;
  xrt_client *c = NULL;
  xrt_executable *e = NULL;
  xrt_buffer *in = NULL, *out = NULL;
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  xrt_shape sh = TU_SHAPE(XRT_F32, 4);
  bool ok = step_ok(xrt_client_create(&o, &c), a);
  xrt_device *d = ok ? xrt_client_device(c, 1) : NULL;
  ok = ok && step_ok(xrt_client_register_host_function(c, "twice", twice,
                                                       NULL), a);
  ok = ok && step_ok(xrt_compile(c, kProgram, strlen(kProgram), NULL, &e), a);
  ok = ok && step_ok(xrt_buffer_from_host(c, d, &sh, x, &in), a);
  ok = ok && step_ok(xrt_execute(e, d, &in, 1, &out, 1, NULL), a);
  ok = ok && step_ok(xrt_buffer_to_host(out, y, sizeof y), a);
  if (ok)
    for (int i = 0; i < 4; i++) assert_true(y[i] == 16 * x[i]);
  xrt_client_release(c); /* releases e, in and out too */
  return ok;
}

static void test_every_allocation_fails_once(void **state) {
  (void)state;
  long n;
  for (n = 1; n < 100000; n++) {
    counting_alloc a = {0, n, 0, false};
    bool ok = workflow(&a);
    assert_int_equal(a.live, 0); /* nothing leaked, whatever failed */
    if (ok && !a.failed) break;  /* got past the last allocation */
  }
  assert_true(n > 5); /* the walk really covered allocation sites */
  print_message("allocation-failure walk: %ld allocation sites\n", n - 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_allocation_fails_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
