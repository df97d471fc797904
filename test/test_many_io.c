/*
 * test_many_io.c - programs with thousands of arguments and results.
 *
 * Models exported by JAX pass every weight (and batch-norm statistic) as an
 * argument of @main, and a training step returns as many results again:
 * ResNet-50 has about 320, large language models thousands.  xrt keeps a
 * call's arrays on the stack only while they are small; these tests run
 * 5,000 arguments and 5,000 results through each way of executing
 * (xrt_execute, xrt_execute_async, pmap, which runs xrt_execute_sharded and
 * xrt_execute_multi, and xrt_execute_variables),
 * with every result checked against a value computed here.
 */
#include "test_util.h"

enum { N = 5000 };

/* func @main(%a0..%a{n-1}: tensor<2xf32>) returning n results: result i is
 * a_i + a_{(i+1) % n}.  malloc'd text. */
static char *many_io_program(int n) {
  size_t cap = (size_t)n * 160 + 256, len = 0;
  char *p = malloc(cap);
  assert_non_null(p);
  len += (size_t)snprintf(p + len, cap - len, "func.func @main(");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(p + len, cap - len, "%s%%a%d: tensor<2xf32>",
                            i ? ", " : "", i);
  len += (size_t)snprintf(p + len, cap - len, ") -> (");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(p + len, cap - len, "%stensor<2xf32>",
                            i ? ", " : "");
  len += (size_t)snprintf(p + len, cap - len, ") {\n");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(p + len, cap - len,
                            "  %%r%d = stablehlo.add %%a%d, %%a%d : "
                            "tensor<2xf32>\n", i, i, (i + 1) % n);
  len += (size_t)snprintf(p + len, cap - len, "  func.return ");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(p + len, cap - len, "%s%%r%d", i ? ", " : "", i);
  len += (size_t)snprintf(p + len, cap - len, " : ");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(p + len, cap - len, "%stensor<2xf32>",
                            i ? ", " : "");
  snprintf(p + len, cap - len, "\n}\n");
  return p;
}

/* Argument i holds {i, -2i}. */
static void arg_values(int i, float v[2]) {
  v[0] = (float)i;
  v[1] = (float)(-2 * i);
}

static void check_results(xrt_buffer **outs, int n) {
  for (int i = 0; i < n; i++) {
    float got[2], a[2], b[2];
    assert_int_equal(xrt_buffer_to_host(outs[i], got, sizeof got), XRT_OK);
    arg_values(i, a);
    arg_values((i + 1) % n, b);
    if (got[0] != a[0] + b[0] || got[1] != a[1] + b[1])
      fail_msg("result %d: {%g, %g}, want {%g, %g}", i, (double)got[0],
               (double)got[1], (double)(a[0] + b[0]), (double)(a[1] + b[1]));
  }
}

typedef struct fixture {
  xrt_client *client;
  xrt_executable *exe;
  xrt_buffer **args, **outs;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return 1;
  xrt_client_options o;
  xrt_client_options_init(&o);
  if (xrt_client_create(&o, &f->client)) return 1;
  char *src = many_io_program(N);
  xrt_status s = xrt_compile(f->client, src, strlen(src), NULL, &f->exe);
  free(src);
  if (s) {
    print_error("compile: %s\n", xrt_last_error());
    return 1;
  }
  f->args = calloc(N, sizeof *f->args);
  f->outs = calloc(N, sizeof *f->outs);
  if (!f->args || !f->outs) return 1;
  xrt_device *dev = xrt_client_device(f->client, 0);
  xrt_shape shape = TU_SHAPE(XRT_F32, 2);
  for (int i = 0; i < N; i++) {
    float v[2];
    arg_values(i, v);
    if (xrt_buffer_from_host(f->client, dev, &shape, v, &f->args[i])) return 1;
  }
  *state = f;
  return 0;
}

static void release_outs(fixture *f) {
  for (int i = 0; i < N; i++) {
    xrt_buffer_release(f->outs[i]);
    f->outs[i] = NULL;
  }
}

static int teardown(void **state) {
  fixture *f = *state;
  release_outs(f);
  for (int i = 0; i < N; i++) xrt_buffer_release(f->args[i]);
  free(f->args);
  free(f->outs);
  xrt_executable_release(f->exe);
  xrt_client_release(f->client);
  free(f);
  return 0;
}

static void test_signature(void **state) {
  fixture *f = *state;
  assert_int_equal(xrt_executable_num_inputs(f->exe), N);
  assert_int_equal(xrt_executable_num_outputs(f->exe), N);
}

static void test_execute(void **state) {
  fixture *f = *state;
  xrt_device *dev = xrt_client_device(f->client, 0);
  for (int rep = 0; rep < 2; rep++) { /* the second reuses recycled buffers */
    assert_int_equal(xrt_execute(f->exe, dev, f->args, N, f->outs, N, NULL),
                     XRT_OK);
    check_results(f->outs, N);
    release_outs(f);
  }
}

static void test_execute_async(void **state) {
  fixture *f = *state;
  xrt_device *dev = xrt_client_device(f->client, 0);
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_async(f->exe, dev, f->args, N, f->outs, N,
                                     NULL, &done),
                   XRT_OK);
  assert_int_equal(xrt_event_await(done), XRT_OK);
  xrt_event_release(done);
  check_results(f->outs, N);
  release_outs(f);
}

/* A wrong count still names both counts, however large. */
static void test_counts_checked(void **state) {
  fixture *f = *state;
  xrt_device *dev = xrt_client_device(f->client, 0);
  assert_int_equal(xrt_execute(f->exe, dev, f->args, N - 1, f->outs, N, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "takes 5000 argument(s), got 4999");
  assert_int_equal(xrt_execute(f->exe, dev, f->args, N, f->outs, N + 1, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "returns 5000 result(s), room for 5001");
  /* a bad buffer late in the list: reported by index, nothing leaked */
  xrt_buffer *saved = f->args[4321];
  f->args[4321] = NULL;
  assert_int_equal(xrt_execute(f->exe, dev, f->args, N, f->outs, N, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 4321 is not a live buffer");
  f->args[4321] = saved;
}

/* Logical argument i of the pmap test: [2][2], row k on device k:
 * {{i, -2i}, {i + 1000, 7}}. */
static void pmap_arg_values(int i, float v[4]) {
  v[0] = (float)i;
  v[1] = (float)(-2 * i);
  v[2] = (float)(i + 1000);
  v[3] = 7.0f;
}

/* pmap (and through it xrt_execute_sharded and xrt_execute_multi) over two
 * devices, each running the 5,000-argument program on its rows. */
static void test_pmap(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 0, 0);
  xrt_device *devs[2] = {xrt_client_device(c, 0), xrt_client_device(c, 1)};
  xrt_sharded_array **args = calloc(N, sizeof *args);
  xrt_sharded_array **outs = calloc(N, sizeof *outs);
  assert_non_null(args);
  assert_non_null(outs);
  xrt_shape shape = TU_SHAPE(XRT_F32, 2, 2);
  xrt_sharding_spec spec = tu_spec_unstacked(2, 2);
  for (int i = 0; i < N; i++) {
    float v[4];
    pmap_arg_values(i, v);
    assert_int_equal(xrt_sharded_array_from_host(c, &shape, v, &spec, devs, 2,
                                                 &args[i]),
                     XRT_OK);
  }
  char *src = many_io_program(N);
  xrt_pmap_options o;
  xrt_pmap_options_init(&o);
  o.text = src;
  o.len = strlen(src);
  xrt_pmap *p = NULL;
  assert_int_equal(xrt_pmap_create(c, &o, &p), XRT_OK);
  assert_int_equal(xrt_pmap_call(p, args, N, outs, N, NULL, NULL), XRT_OK);
  for (int i = 0; i < N; i++) {
    float got[4], a[4], b[4];
    assert_int_equal(xrt_sharded_array_to_host(outs[i], got, sizeof got),
                     XRT_OK);
    pmap_arg_values(i, a);
    pmap_arg_values((i + 1) % N, b);
    for (int k = 0; k < 4; k++)
      if (got[k] != a[k] + b[k])
        fail_msg("result %d[%d]: %g, want %g", i, k, (double)got[k],
                 (double)(a[k] + b[k]));
    xrt_sharded_array_release(outs[i]);
  }
  /* a released argument late in the list is named */
  xrt_sharded_array_release(args[N - 1]);
  assert_int_equal(xrt_pmap_call(p, args, N, outs, N, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 4999 is not a live sharded "
                                       "array");
  for (int i = 0; i < N - 1; i++) xrt_sharded_array_release(args[i]);
  xrt_pmap_release(p);
  free(src);
  free(args);
  free(outs);
  xrt_client_release(c);
}

/* xrt_execute_variables: 5,000 variables, each updated by its result. */
static void test_variables(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 0, 0);
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_sharding_spec spec = tu_spec_replicated(1, 1);
  xrt_variable_format fmt = {&spec, &dev, 1};
  xrt_shape shape = TU_SHAPE(XRT_F32, 2);
  xrt_variable **vars = calloc(N, sizeof *vars);
  xrt_variable_arg *args = calloc(N, sizeof *args);
  xrt_sharded_array **outs = calloc(N, sizeof *outs);
  int *updates = calloc(N, sizeof *updates);
  assert_true(vars && args && outs && updates);
  for (int i = 0; i < N; i++) {
    float v[2];
    arg_values(i, v);
    char name[32];
    snprintf(name, sizeof name, "w%d", i);
    assert_int_equal(xrt_variable_create(c, name, &shape, v, &fmt, &vars[i]),
                     XRT_OK);
    args[i].variable = vars[i];
    updates[i] = i;
  }
  char *src = many_io_program(N);
  xrt_executable *exe = NULL;
  assert_int_equal(xrt_compile(c, src, strlen(src), NULL, &exe), XRT_OK);
  assert_int_equal(xrt_execute_variables(exe, args, N, updates, outs, N, NULL),
                   XRT_OK);
  for (int i = 0; i < N; i++) {
    assert_null(outs[i]); /* donated to variable i */
    float got[2], a[2], b[2];
    assert_int_equal(xrt_variable_to_host(vars[i], got, sizeof got), XRT_OK);
    arg_values(i, a);
    arg_values((i + 1) % N, b);
    if (got[0] != a[0] + b[0] || got[1] != a[1] + b[1])
      fail_msg("variable %d: {%g, %g}, want {%g, %g}", i, (double)got[0],
               (double)got[1], (double)(a[0] + b[0]), (double)(a[1] + b[1]));
  }
  /* two outputs updating one variable: named by index */
  updates[4000] = 17;
  assert_int_equal(xrt_execute_variables(exe, args, N, updates, outs, N, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "'w17'");
  for (int i = 0; i < N; i++) xrt_variable_release(vars[i]);
  xrt_executable_release(exe);
  free(src);
  free(vars);
  free(args);
  free(outs);
  free(updates);
  xrt_client_release(c);
}

/* ---- a while loop carrying many values, compiled and reloaded ---- */

enum { NLOOP = 300 };

/* A loop of NLOOP f32 scalars and an i32 counter: three trips, each adding
 * k + 1 to value k. */
static char *many_loop_program(void) {
  size_t cap = (size_t)NLOOP * 400 + 4096, len = 0;
  char *p = malloc(cap);
  assert_non_null(p);
#define OUT(...) len += (size_t)snprintf(p + len, cap - len, __VA_ARGS__)
  OUT("func.func @main(");
  for (int i = 0; i < NLOOP; i++) OUT("%s%%a%d: tensor<f32>", i ? ", " : "", i);
  OUT(") -> (");
  for (int i = 0; i < NLOOP; i++) OUT("%stensor<f32>", i ? ", " : "");
  OUT(") {\n  %%zero = stablehlo.constant dense<0> : tensor<i32>\n");
  OUT("  %%w:%d = stablehlo.while(%%c = %%zero", NLOOP + 1);
  for (int i = 0; i < NLOOP; i++) OUT(", %%v%d = %%a%d", i, i);
  OUT(") : tensor<i32>");
  for (int i = 0; i < NLOOP; i++) OUT(", tensor<f32>");
  OUT("\n  cond {\n    %%three = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %%lt = stablehlo.compare LT, %%c, %%three : (tensor<i32>, "
      "tensor<i32>) -> tensor<i1>\n    stablehlo.return %%lt : tensor<i1>\n"
      "  } do {\n    %%one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %%c1 = stablehlo.add %%c, %%one : tensor<i32>\n");
  for (int i = 0; i < NLOOP; i++)
    OUT("    %%k%d = stablehlo.constant dense<%d.0> : tensor<f32>\n"
        "    %%n%d = stablehlo.add %%v%d, %%k%d : tensor<f32>\n",
        i, i + 1, i, i, i);
  OUT("    stablehlo.return %%c1");
  for (int i = 0; i < NLOOP; i++) OUT(", %%n%d", i);
  OUT(" : tensor<i32>");
  for (int i = 0; i < NLOOP; i++) OUT(", tensor<f32>");
  OUT("\n  }\n  func.return ");
  for (int i = 0; i < NLOOP; i++) OUT("%s%%w#%d", i ? ", " : "", i + 1);
  OUT(" : ");
  for (int i = 0; i < NLOOP; i++) OUT("%stensor<f32>", i ? ", " : "");
  OUT("\n}\n");
#undef OUT
  return p;
}

/* A store of one executable and its alias, in memory. */
typedef struct one_store {
  char key[2][80];
  void *data[2];
  size_t size[2];
  int n;
} one_store;

static xrt_status os_load(void *self, const char *key, const char *id,
                          void **out, size_t *size) {
  one_store *m = self;
  (void)id;
  for (int i = 0; i < m->n; i++)
    if (!strcmp(m->key[i], key)) {
      *out = malloc(m->size[i]);
      if (!*out) return XRT_RESOURCE_EXHAUSTED;
      memcpy(*out, m->data[i], m->size[i]);
      *size = m->size[i];
      return XRT_OK;
    }
  return XRT_NOT_FOUND;
}

static xrt_status os_save(void *self, const char *key, const char *id,
                          const void *data, size_t size, uint64_t ns) {
  one_store *m = self;
  (void)id;
  (void)ns;
  if (m->n == 2 || !(m->data[m->n] = malloc(size))) return XRT_RESOURCE_EXHAUSTED;
  memcpy(m->data[m->n], data, size);
  m->size[m->n] = size;
  snprintf(m->key[m->n++], sizeof m->key[0], "%s", key);
  return XRT_OK;
}

/* Runs the loop on a fresh client of store; returns its cache counters. */
static xrt_cache_stats run_loop(const xrt_cache_store *store, const char *src) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.cache_store = store;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  xrt_executable *exe = NULL;
  if (xrt_compile(c, src, strlen(src), NULL, &exe))
    fail_msg("compile: %s", xrt_last_error());
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_buffer *args[NLOOP], *outs[NLOOP];
  xrt_shape scalar = TU_SCALAR(XRT_F32);
  for (int i = 0; i < NLOOP; i++) {
    float v = (float)(10 * i);
    assert_int_equal(xrt_buffer_from_host(c, dev, &scalar, &v, &args[i]),
                     XRT_OK);
  }
  assert_int_equal(xrt_execute(exe, dev, args, NLOOP, outs, NLOOP, NULL),
                   XRT_OK);
  for (int i = 0; i < NLOOP; i++) {
    float got;
    assert_int_equal(xrt_buffer_to_host(outs[i], &got, sizeof got), XRT_OK);
    float want = (float)(10 * i + 3 * (i + 1));
    if (got != want) fail_msg("value %d: %g, want %g", i, (double)got,
                              (double)want);
    xrt_buffer_release(outs[i]);
    xrt_buffer_release(args[i]);
  }
  xrt_cache_stats st;
  assert_int_equal(xrt_client_get_cache_stats(c, &st), XRT_OK);
  xrt_executable_release(exe);
  xrt_client_release(c);
  return st;
}

/* Compiled, then loaded from the store by another client: the loader's
 * own checks take a loop of any width too. */
static void test_while_many_values(void **state) {
  (void)state;
  char *src = many_loop_program();
  one_store m;
  memset(&m, 0, sizeof m);
  xrt_cache_store store = {.struct_size = sizeof(xrt_cache_store),
                           .self = &m,
                           .load = os_load,
                           .release_data = tu_free,
                           .save = os_save};
  xrt_cache_stats first = run_loop(&store, src);
  assert_int_equal(first.store_writes, 1);
  xrt_cache_stats second = run_loop(&store, src);
  assert_int_equal(second.store_hits, 1);
  assert_int_equal(second.store_errors, 0);
  for (int i = 0; i < m.n; i++) free(m.data[i]);
  free(src);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_signature),
      cmocka_unit_test(test_execute),
      cmocka_unit_test(test_execute_async),
      cmocka_unit_test(test_counts_checked),
  };
  const struct CMUnitTest alone[] = {
      cmocka_unit_test(test_pmap),
      cmocka_unit_test(test_variables),
      cmocka_unit_test(test_while_many_values),
  };
  int failed = cmocka_run_group_tests(tests, setup, teardown);
  return failed + cmocka_run_group_tests(alone, NULL, NULL);
}
