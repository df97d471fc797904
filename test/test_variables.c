/*
 * test_variables.c - variables: create and read back, format keys, reshard
 * between chunked and replicated formats checked element by element,
 * no-op reshards that touch no device, a donated `w = w - lr * g` step on
 * 8 devices, .npy save and load (and bad files), bad formats and an
 * injected transfer fault that leave the variables as they were; client
 * stats, fault kinds and region copies underneath.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <unistd.h>

#include "test_util.h"

#define NDEV 8

/* devs[k] = device ids[k]. */
static void devices_of(xrt_client *c, const int *ids, int n,
                       xrt_device **devs) {
  for (int k = 0; k < n; k++) devs[k] = xrt_client_device(c, ids[k]);
}

static const int ids8[NDEV] = {0, 1, 2, 3, 4, 5, 6, 7};
static const int ids8r[NDEV] = {7, 6, 5, 4, 3, 2, 1, 0};

/* A [R][C] f32 array with x[i][j] = 1000 i + j + 0.5. */
#define R 16
#define C 6
static void fill(float *x) {
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) x[i * C + j] = 1000.0f * (float)i + (float)j + 0.5f;
}

/* Checks the variable's logical array against want, element by element. */
static void assert_values(xrt_variable *v, const float *want, int n) {
  float got[R * C];
  assert_true(n <= R * C);
  memset(got, 0, sizeof got);
  assert_int_equal(xrt_variable_to_host(v, got, sizeof got), XRT_OK);
  for (int i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("element %d: got %g, want %g", i, (double)got[i],
               (double)want[i]);
}

static xrt_variable *make_var(xrt_client *c, const char *name, const float *x,
                              const xrt_sharding_spec *spec, const int *ids,
                              int n) {
  xrt_device *devs[NDEV];
  devices_of(c, ids, n, devs);
  xrt_variable_format f = {spec, devs, n};
  xrt_shape shape = TU_SHAPE(XRT_F32, R, C);
  xrt_variable *v = NULL;
  if (xrt_variable_create(c, name, &shape, x, &f, &v) != XRT_OK)
    fail_msg("create: %s", xrt_last_error());
  return v;
}

static xrt_status reshard1(xrt_client *c, xrt_variable *v,
                           const xrt_sharding_spec *spec, const int *ids,
                           int n) {
  xrt_device *devs[NDEV];
  devices_of(c, ids, n, devs);
  xrt_variable_format f = {spec, devs, n};
  return xrt_variables_reshard(&v, &f, 1, NULL);
}

static void test_create_to_host(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 1, 0);
  float x[R * C];
  fill(x);
  xrt_sharding_spec s = tu_spec_chunked(2, 0, NDEV);
  xrt_variable *v = make_var(c, "w", x, &s, ids8, NDEV);
  assert_string_equal(xrt_variable_name(v), "w");
  assert_int_equal(xrt_variable_num_devices(v), NDEV);
  assert_int_equal(xrt_device_id(xrt_variable_device(v, 3)), 3);
  assert_null(xrt_variable_device(v, NDEV));
  xrt_shape sh;
  assert_int_equal(xrt_variable_shape(v, &sh), XRT_OK);
  assert_int_equal(sh.rank, 2);
  assert_int_equal(sh.dims[0], R);
  assert_int_equal(sh.dims[1], C);
  xrt_sharding_spec got;
  assert_int_equal(xrt_variable_spec(v, &got), XRT_OK);
  assert_int_equal(got.dims[0].kind, XRT_DIM_CHUNKED);
  assert_values(v, x, R * C);
  /* Too small a destination. */
  float small[4];
  assert_int_equal(xrt_variable_to_host(v, small, sizeof small),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variable_release(v), XRT_OK);
  assert_int_equal(xrt_variable_release(v), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variable_to_host(v, x, sizeof x), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variable_format_key(v), 0);
  /* A variable still alive at client release goes with it. */
  make_var(c, "left", x, &s, ids8, NDEV);
  xrt_client_release(c);
}

static void test_format_keys(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 1, 0);
  xrt_device *d8[NDEV], *d8r[NDEV];
  devices_of(c, ids8, NDEV, d8);
  devices_of(c, ids8r, NDEV, d8r);
  xrt_shape shape = TU_SHAPE(XRT_F32, R, C);
  xrt_sharding_spec ch = tu_spec_chunked(2, 0, NDEV), ch2 = tu_spec_chunked(2, 0, NDEV),
                    re = tu_spec_replicated(2, NDEV), c42 = tu_spec_chunked2(4, 2);
  /* Garbage in fields a kind does not use must not change the key. */
  ch2.dims[1].size = 77;
  ch2.mesh[0].replicas = 99;
  xrt_variable_format f_ch = {&ch, d8, NDEV}, f_ch2 = {&ch2, d8, NDEV},
                      f_chr = {&ch, d8r, NDEV}, f_re = {&re, d8, NDEV},
                      f_42 = {&c42, d8, NDEV};
  uint64_t k_ch = xrt_variable_format_key_of(&shape, &f_ch);
  assert_true(k_ch != 0);
  assert_true(k_ch == xrt_variable_format_key_of(&shape, &f_ch));
  assert_true(k_ch == xrt_variable_format_key_of(&shape, &f_ch2));
  assert_true(k_ch != xrt_variable_format_key_of(&shape, &f_chr));
  assert_true(k_ch != xrt_variable_format_key_of(&shape, &f_re));
  assert_true(k_ch != xrt_variable_format_key_of(&shape, &f_42));
  xrt_shape other = TU_SHAPE(XRT_F32, R, 2 * C);
  assert_true(k_ch != xrt_variable_format_key_of(&other, &f_ch));
  /* Invalid: a chunking that does not divide, too few devices. */
  xrt_sharding_spec bad = tu_spec_chunked(2, 1, NDEV); /* 6 columns by 8 */
  xrt_variable_format f_bad = {&bad, d8, NDEV}, f_few = {&ch, d8, 4};
  assert_true(xrt_variable_format_key_of(&shape, &f_bad) == 0);
  assert_true(xrt_variable_format_key_of(&shape, &f_few) == 0);
  float x[R * C];
  fill(x);
  xrt_variable *v = make_var(c, "k", x, &ch, ids8, NDEV);
  assert_true(xrt_variable_format_key(v) == k_ch);
  xrt_variable_release(v);
  xrt_client_release(c);
}

static void test_reshard_chunk_replicated(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 1, 0);
  float x[R * C];
  fill(x);
  xrt_sharding_spec ch = tu_spec_chunked(2, 0, NDEV), re = tu_spec_replicated(2, NDEV),
                    c42 = tu_spec_chunked2(4, 2), col = tu_spec_chunked(2, 1, 2);
  xrt_variable *v = make_var(c, "w", x, &ch, ids8, NDEV);
  assert_int_equal(reshard1(c, v, &re, ids8, NDEV), XRT_OK);
  assert_values(v, x, R * C);
  xrt_device *d8[NDEV];
  devices_of(c, ids8, NDEV, d8);
  xrt_variable_format f_re = {&re, d8, NDEV};
  xrt_shape shape = TU_SHAPE(XRT_F32, R, C);
  assert_true(xrt_variable_format_key(v) ==
              xrt_variable_format_key_of(&shape, &f_re));
  assert_int_equal(reshard1(c, v, &ch, ids8r, NDEV), XRT_OK);
  assert_values(v, x, R * C);
  assert_int_equal(xrt_device_id(xrt_variable_device(v, 0)), 7);
  assert_int_equal(reshard1(c, v, &c42, ids8, NDEV), XRT_OK);
  assert_values(v, x, R * C);
  assert_int_equal(reshard1(c, v, &col, (const int[]){3, 5}, 2), XRT_OK);
  assert_values(v, x, R * C);
  assert_int_equal(xrt_variable_num_devices(v), 2);
  assert_int_equal(reshard1(c, v, &ch, ids8, NDEV), XRT_OK);
  assert_values(v, x, R * C);
  xrt_variable_release(v);
  xrt_client_release(c);
}

static void test_reshard_multi_and_keep(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 1, 0);
  float x[R * C], y[R * C];
  fill(x);
  for (int i = 0; i < R * C; i++) y[i] = -x[i];
  xrt_sharding_spec ch = tu_spec_chunked(2, 0, NDEV), re = tu_spec_replicated(2, NDEV),
                    ch4 = tu_spec_chunked(2, 0, 4);
  xrt_variable *v[2] = {make_var(c, "a", x, &ch, ids8, NDEV),
                        make_var(c, "b", y, &re, ids8, NDEV)};
  xrt_device *d8[NDEV];
  devices_of(c, ids8, NDEV, d8);
  /* a: chunk8 -> replicated; b: replicated on 8 -> replicated on the first
   * 4 (each piece kept where it is: no copy, no allocation). */
  xrt_sharding_spec re4 = tu_spec_replicated(2, 4);
  xrt_variable_format f[2] = {{&re, d8, NDEV}, {&re4, d8, 4}};
  xrt_client_stats s0, s1;
  assert_int_equal(xrt_client_get_stats(c, &s0), XRT_OK);
  assert_int_equal(xrt_variables_reshard(v, f, 2, NULL), XRT_OK);
  assert_int_equal(xrt_client_get_stats(c, &s1), XRT_OK);
  /* a: 8 new pieces, each filled from the 8 chunks; b: 4 kept, 4 freed. */
  assert_int_equal(s1.device_allocations - s0.device_allocations, NDEV);
  assert_int_equal(s1.device_frees - s0.device_frees, NDEV + 4);
  assert_int_equal(s1.device_copies - s0.device_copies, NDEV * NDEV);
  assert_int_equal(s1.device_bytes_copied - s0.device_bytes_copied,
                   (uint64_t)NDEV * R * C * sizeof(float));
  assert_values(v[0], x, R * C);
  assert_values(v[1], y, R * C);
  /* Chunks of 4 rows over devices 0..3 -> chunks of 4 over the same. */
  xrt_variable_format g = {&ch4, d8, 4};
  assert_int_equal(xrt_variables_reshard(&v[0], &g, 1, NULL), XRT_OK);
  assert_values(v[0], x, R * C);
  /* A variable twice in one call. */
  xrt_variable *twice[2] = {v[0], v[0]};
  xrt_variable_format f2[2] = {{&ch, d8, NDEV}, {&ch, d8, NDEV}};
  assert_int_equal(xrt_variables_reshard(twice, f2, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "same variable");
  /* Through host memory, on request. */
  xrt_reshard_options o;
  xrt_reshard_options_init(&o);
  o.via_host = true;
  assert_int_equal(xrt_variables_reshard(&v[0], &f[0], 1, &o), XRT_OK);
  assert_values(v[0], x, R * C);
  xrt_variable_release(v[0]);
  xrt_variable_release(v[1]);
  xrt_client_release(c);
}

static void test_reshard_noop_moves_nothing(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 1, 0);
  float x[R * C];
  fill(x);
  xrt_sharding_spec ch = tu_spec_chunked(2, 0, NDEV);
  xrt_variable *v = make_var(c, "w", x, &ch, ids8, NDEV);
  uint64_t key = xrt_variable_format_key(v);
  xrt_client_stats s0, s1;
  assert_int_equal(xrt_client_get_stats(c, &s0), XRT_OK);
  assert_true(s0.device_allocations >= NDEV);
  assert_true(s0.host_to_device >= NDEV);
  assert_int_equal(s0.device_bytes_in_use, R * C * sizeof(float));
  xrt_sharding_spec same = tu_spec_chunked(2, 0, NDEV);
  same.dims[1].size = 5; /* unused by NoSharding: the same format */
  for (int i = 0; i < 10; i++)
    assert_int_equal(reshard1(c, v, &same, ids8, NDEV), XRT_OK);
  assert_int_equal(xrt_client_get_stats(c, &s1), XRT_OK);
  assert_memory_equal(&s0, &s1, sizeof s0);
  assert_true(xrt_variable_format_key(v) == key);
  assert_values(v, x, R * C);
  xrt_variable_release(v);
  xrt_client_release(c);
}

/* w = w - lr * g on each device's piece. */
static const char *sgd =
    "func.func @main(%w: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>)"
    " -> (tensor<4xf32>, tensor<f32>) {\n"
    "  %b = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> "
    "tensor<4xf32>\n"
    "  %m = stablehlo.multiply %b, %g : tensor<4xf32>\n"
    "  %r = stablehlo.subtract %w, %m : tensor<4xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across "
    "dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
    "  func.return %r, %s : tensor<4xf32>, tensor<f32>\n"
    "}\n";

static void test_execute_sgd_step(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 1, 0);
  xrt_executable *e = tu_compile(c, sgd, NDEV, ids8);
  enum { N = 4 * NDEV };
  float w[N], g[N], lr = 0.25f, want[N];
  for (int i = 0; i < N; i++) {
    w[i] = (float)i;
    g[i] = (float)(i % 5) - 2.0f;
  }
  xrt_device *d8[NDEV];
  devices_of(c, ids8, NDEV, d8);
  xrt_shape shape = TU_SHAPE(XRT_F32, N), scalar = TU_SCALAR(XRT_F32);
  xrt_sharding_spec ch = tu_spec_chunked(1, 0, NDEV), re0 = tu_spec_replicated(0, NDEV);
  xrt_variable_format f = {&ch, d8, NDEV};
  xrt_variable *wv = NULL;
  assert_int_equal(xrt_variable_create(c, "w", &shape, w, &f, &wv), XRT_OK);
  xrt_sharded_array *ga = NULL, *lra = NULL;
  assert_int_equal(xrt_sharded_array_from_host(c, &shape, g, &ch, d8, NDEV, &ga),
                   XRT_OK);
  assert_int_equal(
      xrt_sharded_array_from_host(c, &scalar, &lr, &re0, d8, NDEV, &lra),
      XRT_OK);
  memcpy(want, w, sizeof w);
  uint64_t key = xrt_variable_format_key(wv);
  for (int step = 0; step < 3; step++) {
    xrt_variable_arg args[3] = {{wv, NULL}, {NULL, ga}, {NULL, lra}};
    int updates[2] = {0, -1};
    xrt_sharded_array *outs[2] = {NULL, NULL};
    assert_int_equal(xrt_execute_variables(e, args, 3, updates, outs, 2, NULL),
                     XRT_OK);
    assert_null(outs[0]);
    assert_non_null(outs[1]);
    for (int i = 0; i < N; i++) want[i] = want[i] - lr * g[i];
    float got[N], sums[NDEV];
    assert_int_equal(xrt_variable_to_host(wv, got, sizeof got), XRT_OK);
    for (int i = 0; i < N; i++) assert_float_equal(got[i], want[i], 0.0f);
    /* The other output: each device's sum, Unstacked over the devices. */
    assert_int_equal(xrt_sharded_array_to_host(outs[1], sums, sizeof sums),
                     XRT_OK);
    for (int k = 0; k < NDEV; k++) {
      float s = 0;
      for (int j = 0; j < 4; j++) s += want[4 * k + j];
      assert_float_equal(sums[k], s, 1e-4f);
    }
    xrt_sharded_array_release(outs[1]);
  }
  assert_true(xrt_variable_format_key(wv) == key);
  /* Bad input: no variable changes. */
  xrt_variable_arg bad[3] = {{wv, ga}, {NULL, ga}, {NULL, lra}};
  xrt_sharded_array *outs[2] = {NULL, NULL};
  int updates[2] = {0, -1};
  assert_int_equal(xrt_execute_variables(e, bad, 3, updates, outs, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 0");
  int upd_array[2] = {1, -1};
  xrt_variable_arg good[3] = {{wv, NULL}, {NULL, ga}, {NULL, lra}};
  assert_int_equal(xrt_execute_variables(e, good, 3, upd_array, outs, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "updates[0]");
  /* A variable in another format than the other arguments. */
  xrt_sharding_spec re1 = tu_spec_replicated(1, NDEV);
  xrt_variable_format fr = {&re1, d8, NDEV};
  xrt_variable *wr = NULL;
  assert_int_equal(xrt_variable_create(c, "wr", &shape, w, &fr, &wr), XRT_OK);
  xrt_variable_arg wrong[3] = {{wr, NULL}, {NULL, ga}, {NULL, lra}};
  assert_int_equal(xrt_execute_variables(e, wrong, 3, updates, outs, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "output 0");
  assert_null(outs[0]);
  assert_null(outs[1]);
  /* A failing execution (an injected kernel fault) changes nothing. */
  assert_int_equal(xrt_device_inject_fault_kind(d8[2], XRT_FAULT_KERNEL, 1),
                   XRT_OK);
  assert_int_not_equal(
      xrt_execute_variables(e, good, 3, updates, outs, 2, NULL), XRT_OK);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device 2");
  assert_null(outs[1]);
  float got[N];
  assert_int_equal(xrt_variable_to_host(wv, got, sizeof got), XRT_OK);
  for (int i = 0; i < N; i++) assert_float_equal(got[i], want[i], 0.0f);
  /* A released variable. */
  xrt_variable_release(wr);
  assert_int_equal(xrt_execute_variables(e, wrong, 3, updates, outs, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 0");
  xrt_sharded_array_release(ga);
  xrt_sharded_array_release(lra);
  xrt_variable_release(wv);
  xrt_executable_release(e);
  xrt_client_release(c);
}

/* A path in the temporary directory, unique per process. */
static void tmp_path(char *buf, size_t cap, const char *name) {
  const char *dir = getenv("TMPDIR");
  snprintf(buf, cap, "%s/xrt_var_%ld_%s", dir && *dir ? dir : "/tmp",
           (long)getpid(), name);
}

static void test_save_load(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 1, 0);
  float x[R * C], y[R * C];
  fill(x);
  for (int i = 0; i < R * C; i++) y[i] = 2.0f * x[i] + 1.0f;
  xrt_sharding_spec ch = tu_spec_chunked(2, 0, NDEV), c42 = tu_spec_chunked2(4, 2);
  xrt_variable *v = make_var(c, "w", x, &ch, ids8, NDEV);
  xrt_variable *u = make_var(c, "u", y, &c42, ids8r, NDEV);
  char good[256], bad[256];
  tmp_path(good, sizeof good, "good.npy");
  tmp_path(bad, sizeof bad, "bad.npy");
  assert_int_equal(xrt_variable_save(u, good), XRT_OK);
  uint64_t key = xrt_variable_format_key(v);
  assert_int_equal(xrt_variable_load(v, good), XRT_OK);
  assert_true(xrt_variable_format_key(v) == key);
  assert_values(v, y, R * C);
  /* The file is a plain .npy: its bytes after the header are y. */
  size_t n;
  char *file = tu_read_file(good, &n);
  assert_true(n > sizeof y);
  assert_memory_equal(file + n - sizeof y, y, sizeof y);
  assert_memory_equal(file, "\x93NUMPY", 6);
  /* create_from_npy in another format. */
  xrt_device *d8[NDEV];
  devices_of(c, ids8, NDEV, d8);
  xrt_sharding_spec re = tu_spec_replicated(2, NDEV);
  xrt_variable_format fr = {&re, d8, NDEV};
  xrt_variable *z = NULL;
  assert_int_equal(xrt_variable_create_from_npy(c, "z", good, &fr, &z), XRT_OK);
  assert_values(z, y, R * C);
  xrt_variable_release(z);

  /* Bad files: each an error, the variable unchanged (it holds y). */
  char missing[256];
  tmp_path(missing, sizeof missing, "missing.npy");
  assert_int_equal(xrt_variable_load(v, missing), XRT_NOT_FOUND);
  tu_write_file(bad, file, n / 2); /* truncated */
  assert_int_equal(xrt_variable_load(v, bad), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "truncated");
  tu_write_file(bad, "hello, this is not numpy at all", 31);
  assert_int_equal(xrt_variable_load(v, bad), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "not a .npy file");
  /* Another dtype: the same header with '<f8'. */
  unsigned char other[4096];
  memcpy(other, file, n);
  char *descr = strstr((char *)other + 10, "<f4");
  assert_non_null(descr);
  descr[2] = '8';
  tu_write_file(bad, other, n);
  assert_int_equal(xrt_variable_load(v, bad), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "f64");
  /* Another shape: (16, 6) -> (16, 3) with the data cut to fit. */
  memcpy(other, file, n);
  char *shape = strstr((char *)other + 10, "(16, 6)");
  assert_non_null(shape);
  shape[5] = '3';
  tu_write_file(bad, other, n - sizeof y / 2);
  assert_int_equal(xrt_variable_load(v, bad), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "16x3");
  assert_values(v, y, R * C);
  assert_true(xrt_variable_format_key(v) == key);
  /* Saving to a directory that does not exist fails, no file appears. */
  char nodir[300];
  snprintf(nodir, sizeof nodir, "%s.d/x.npy", missing);
  assert_int_not_equal(xrt_variable_save(v, nodir), XRT_OK);
  free(file);
  remove(good);
  remove(bad);
  xrt_variable_release(v);
  xrt_variable_release(u);
  xrt_client_release(c);
}

static void test_bad_formats_leave_variable(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 1, 0);
  xrt_client *other = tu_client(2, 1, 0);
  float x[R * C];
  fill(x);
  xrt_sharding_spec ch = tu_spec_chunked(2, 0, NDEV);
  xrt_variable *v = make_var(c, "w", x, &ch, ids8, NDEV);
  uint64_t key = xrt_variable_format_key(v);
  xrt_device *d8[NDEV];
  devices_of(c, ids8, NDEV, d8);
  /* A spec that does not divide the shape (6 columns in 4 chunks). */
  xrt_sharding_spec bad = tu_spec_chunked(2, 1, 4);
  xrt_variable_format f = {&bad, d8, 4};
  assert_int_equal(xrt_variables_reshard(&v, &f, 1, NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "variables[0] ('w')");
  /* Too few devices, a repeated device, another client's device. */
  xrt_variable_format few = {&ch, d8, 4};
  assert_int_equal(xrt_variables_reshard(&v, &few, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  xrt_device *dup[NDEV];
  memcpy(dup, d8, sizeof dup);
  dup[5] = dup[1];
  xrt_variable_format fd = {&ch, dup, NDEV};
  assert_int_equal(xrt_variables_reshard(&v, &fd, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "same device");
  xrt_device *foreign[NDEV];
  memcpy(foreign, d8, sizeof foreign);
  foreign[0] = xrt_client_device(other, 0);
  xrt_variable_format ff = {&ch, foreign, NDEV};
  assert_int_equal(xrt_variables_reshard(&v, &ff, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "devices[0]");
  /* A bad second target stops the first variable's move too. */
  xrt_variable *u = make_var(c, "u", x, &ch, ids8, NDEV);
  xrt_sharding_spec re = tu_spec_replicated(2, NDEV);
  xrt_variable *both[2] = {u, v};
  xrt_variable_format fb[2] = {{&re, d8, NDEV}, {&bad, d8, 4}};
  assert_int_equal(xrt_variables_reshard(both, fb, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "variables[1]");
  assert_true(xrt_variable_format_key(u) == key);
  assert_true(xrt_variable_format_key(v) == key);
  assert_values(v, x, R * C);
  assert_values(u, x, R * C);
  /* A released variable in a call. */
  xrt_variable_release(u);
  assert_int_equal(xrt_variables_reshard(both, fb, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "variables[0] is not a live");
  xrt_variable_release(v);
  xrt_client_release(other);
  xrt_client_release(c);
}

static void test_transfer_fault_is_atomic(void **state) {
  (void)state;
  xrt_client *c = tu_client(NDEV, 1, 0);
  float x[R * C], y[R * C];
  fill(x);
  for (int i = 0; i < R * C; i++) y[i] = 3.0f - x[i];
  xrt_sharding_spec ch = tu_spec_chunked(2, 0, NDEV), re = tu_spec_replicated(2, NDEV),
                    c42 = tu_spec_chunked2(4, 2);
  xrt_variable *v[2] = {make_var(c, "a", x, &ch, ids8, NDEV),
                        make_var(c, "b", y, &re, ids8, NDEV)};
  uint64_t ka = xrt_variable_format_key(v[0]), kb = xrt_variable_format_key(v[1]);
  xrt_device *d8[NDEV], *d8r[NDEV];
  devices_of(c, ids8, NDEV, d8);
  devices_of(c, ids8r, NDEV, d8r);
  xrt_variable_format f[2] = {{&re, d8, NDEV}, {&c42, d8r, NDEV}};
  xrt_client_stats s0, s1;
  assert_int_equal(xrt_client_get_stats(c, &s0), XRT_OK);
  /* The 20th transfer touching device 6 fails, in the middle of the
   * copies (a needs 8 into device 6, b needs some from it). */
  assert_int_equal(xrt_device_inject_fault_kind(d8[6], XRT_FAULT_TRANSFER, 5),
                   XRT_OK);
  assert_int_equal(xrt_variables_reshard(v, f, 2, NULL), XRT_INTERNAL);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device 6: injected transfer fault");
  assert_true(xrt_variable_format_key(v[0]) == ka);
  assert_true(xrt_variable_format_key(v[1]) == kb);
  assert_values(v[0], x, R * C);
  assert_values(v[1], y, R * C);
  /* Every new piece was freed: the same device bytes as before. */
  assert_int_equal(xrt_client_get_stats(c, &s1), XRT_OK);
  assert_int_equal(s1.device_bytes_in_use, s0.device_bytes_in_use);
  /* The fault was one-shot: the same call now succeeds. */
  assert_int_equal(xrt_variables_reshard(v, f, 2, NULL), XRT_OK);
  assert_values(v[0], x, R * C);
  assert_values(v[1], y, R * C);
  /* An allocation fault: the staged plan still moves everything. */
  xrt_variable_format back[2] = {{&ch, d8, NDEV}, {&re, d8, NDEV}};
  assert_int_equal(xrt_device_inject_fault_kind(d8[3], XRT_FAULT_ALLOC, 0),
                   XRT_OK);
  assert_int_equal(xrt_variables_reshard(v, back, 2, NULL), XRT_OK);
  assert_true(xrt_variable_format_key(v[0]) == ka);
  assert_true(xrt_variable_format_key(v[1]) == kb);
  assert_values(v[0], x, R * C);
  assert_values(v[1], y, R * C);
  /* A cancelled fault does not fire. */
  assert_int_equal(xrt_device_inject_fault_kind(d8[0], XRT_FAULT_TRANSFER, 0),
                   XRT_OK);
  assert_int_equal(xrt_device_inject_fault_kind(d8[0], XRT_FAULT_TRANSFER, -1),
                   XRT_OK);
  assert_values(v[0], x, R * C);
  assert_int_equal(xrt_device_inject_fault_kind(d8[0], (xrt_fault_kind)9, 0),
                   XRT_INVALID_ARGUMENT);
  xrt_variable_release(v[0]);
  xrt_variable_release(v[1]);
  xrt_client_release(c);
}

/* Devices of 1.125 x the array's bytes: chunked -> replicated fits only
 * when the old chunks go first; a second array's move that cannot fit
 * even then fails with nothing lost. */
static void test_memory_pressure(void **state) {
  (void)state;
  enum { N = 1024, M = 512 };
  size_t whole = N * sizeof(float);
  xrt_client *c = tu_client(4, 1, whole + whole / 8);
  float x[N], y[M], got[N];
  for (int i = 0; i < N; i++) x[i] = (float)i * 0.5f;
  for (int i = 0; i < M; i++) y[i] = 7.0f - (float)i;
  xrt_device *d4[4];
  devices_of(c, ids8, 4, d4);
  xrt_shape sx = TU_SHAPE(XRT_F32, N), sy = TU_SHAPE(XRT_F32, M);
  xrt_sharding_spec ch = tu_spec_chunked(1, 0, 4), re = tu_spec_replicated(1, 4);
  xrt_variable_format fc = {&ch, d4, 4}, fr = {&re, d4, 4};
  xrt_variable *v = NULL, *w = NULL;
  assert_int_equal(xrt_variable_create(c, "v", &sx, x, &fc, &v), XRT_OK);
  assert_int_equal(xrt_variable_create(c, "w", &sy, y, &fc, &w), XRT_OK);
  /* Per device: v's chunk 1024 + w's 512 + v whole 4096 > 4608. */
  assert_int_equal(xrt_variables_reshard(&v, &fr, 1, NULL), XRT_OK);
  assert_int_equal(xrt_variable_to_host(v, got, sizeof got), XRT_OK);
  assert_memory_equal(got, x, sizeof x);
  /* Now full: w replicated (2048 per device) cannot fit even without its
   * chunks. */
  uint64_t key = xrt_variable_format_key(w);
  xrt_client_stats s0, s1;
  assert_int_equal(xrt_client_get_stats(c, &s0), XRT_OK);
  assert_int_equal(xrt_variables_reshard(&w, &fr, 1, NULL),
                   XRT_RESOURCE_EXHAUSTED);
  assert_int_equal(xrt_client_get_stats(c, &s1), XRT_OK);
  assert_int_equal(s1.device_bytes_in_use, s0.device_bytes_in_use);
  assert_true(xrt_variable_format_key(w) == key);
  assert_int_equal(xrt_variable_to_host(w, got, sizeof y), XRT_OK);
  assert_memory_equal(got, y, sizeof y);
  /* Both at once fit: v back to chunks frees room for w. */
  xrt_variable *pair[2] = {v, w};
  xrt_variable_format tgt[2] = {fc, fr};
  assert_int_equal(xrt_variables_reshard(pair, tgt, 2, NULL), XRT_OK);
  assert_int_equal(xrt_variable_to_host(v, got, sizeof got), XRT_OK);
  assert_memory_equal(got, x, sizeof x);
  assert_int_equal(xrt_variable_to_host(w, got, sizeof y), XRT_OK);
  assert_memory_equal(got, y, sizeof y);
  xrt_variable_release(v);
  xrt_variable_release(w);
  xrt_client_release(c);
}

/* Each fault kind fails its own operation once, naming the device; the
 * stats count what ran. */
static const char *allsum =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
    "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
    "    %s = stablehlo.add %x, %y : tensor<f32>\n"
    "    stablehlo.return %s : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "    : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %r : tensor<4xf32>\n"
    "}\n";

static void test_fault_kinds_and_stats(void **state) {
  (void)state;
  xrt_client *c = tu_client(4, 1, 0);
  xrt_device *d[4];
  devices_of(c, ids8, 4, d);
  xrt_client_stats s0, s1;
  assert_int_equal(xrt_client_get_stats(c, &s0), XRT_OK);
  assert_int_equal(xrt_client_get_stats(NULL, &s1), XRT_INVALID_ARGUMENT);
  float a[4] = {1, 2, 3, 4}, b[4];
  xrt_shape sh = TU_SHAPE(XRT_F32, 4);
  xrt_buffer *buf = NULL;
  /* ALLOC: the second allocation on device 1 fails as out of memory. */
  assert_int_equal(xrt_device_inject_fault_kind(d[1], XRT_FAULT_ALLOC, 1),
                   XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, d[1], &sh, a, &buf), XRT_OK);
  xrt_buffer_release(buf);
  assert_int_equal(xrt_buffer_from_host(c, d[1], &sh, a, &buf),
                   XRT_RESOURCE_EXHAUSTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device 1: injected allocation fault");
  assert_int_equal(xrt_buffer_from_host(c, d[1], &sh, a, &buf), XRT_OK);
  /* TRANSFER: the next read from device 1 fails; the buffer stays good. */
  assert_int_equal(xrt_device_inject_fault_kind(d[1], XRT_FAULT_TRANSFER, 0),
                   XRT_OK);
  assert_int_equal(xrt_buffer_to_host(buf, b, sizeof b), XRT_INTERNAL);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device-to-host transfer");
  assert_int_equal(xrt_buffer_to_host(buf, b, sizeof b), XRT_OK);
  assert_memory_equal(a, b, sizeof a);
  xrt_buffer_release(buf);
  assert_int_equal(xrt_client_get_stats(c, &s1), XRT_OK);
  assert_int_equal(s1.device_allocations - s0.device_allocations, 2);
  assert_int_equal(s1.device_frees - s0.device_frees, 2);
  assert_int_equal(s1.host_to_device - s0.host_to_device, 2);
  assert_int_equal(s1.device_to_host - s0.device_to_host, 2);
  assert_int_equal(s1.device_bytes_in_use, s0.device_bytes_in_use);
  /* COLLECTIVE: device 2's all_reduce fails and releases its peers. */
  xrt_executable *e = tu_compile(c, allsum, 4, ids8);
  assert_int_equal(xrt_client_get_stats(c, &s1), XRT_OK);
  assert_int_equal(s1.compiles - s0.compiles, 1);
  xrt_sharding_spec ch = tu_spec_chunked(1, 0, 4);
  xrt_shape whole = TU_SHAPE(XRT_F32, 16);
  float x[16], y[16];
  for (int i = 0; i < 16; i++) x[i] = (float)i;
  xrt_sharded_array *in = NULL, *out = NULL;
  assert_int_equal(xrt_sharded_array_from_host(c, &whole, x, &ch, d, 4, &in),
                   XRT_OK);
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  const xrt_sharding_spec *outspec[1] = {&ch};
  o.output_specs = outspec;
  assert_int_equal(xrt_device_inject_fault_kind(d[2], XRT_FAULT_COLLECTIVE, 0),
                   XRT_OK);
  xrt_event *done = NULL;
  xrt_status s = xrt_execute_sharded(e, &in, 1, &out, 1, &o, &done);
  if (!s) s = xrt_event_await(done);
  assert_int_not_equal(s, XRT_OK);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device 2: injected collective fault");
  xrt_event_release(done);
  xrt_sharded_array_release(out);
  out = NULL;
  /* One-shot: the same launch now runs; out[k] = sum over the 4 pieces. */
  assert_int_equal(xrt_execute_sharded(e, &in, 1, &out, 1, &o, NULL), XRT_OK);
  assert_int_equal(xrt_sharded_array_to_host(out, y, sizeof y), XRT_OK);
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 4; i++)
      assert_float_equal(y[4 * k + i], x[i] + x[4 + i] + x[8 + i] + x[12 + i],
                         0.0f);
  assert_int_equal(xrt_client_get_stats(c, &s1), XRT_OK);
  assert_true(s1.executions - s0.executions >= 4);
  xrt_sharded_array_release(out);
  xrt_sharded_array_release(in);
  xrt_executable_release(e);
  assert_int_equal(xrt_device_inject_fault_kind(NULL, XRT_FAULT_ALLOC, 0),
                   XRT_INVALID_ARGUMENT);
  xrt_client_release(c);
}

/* A plugin without buffer_copy_region (the simulator's table with it
 * removed, and with or without host pointers): the core's fallback does
 * the reshard's region copies through host memory. */
static void reshard_without_region_copies(bool host_pointers) {
  static xrt_plugin_api api[2];
  api[host_pointers] = *xrt_sim_plugin_api();
  api[host_pointers].buffer_copy_region = NULL;
  if (!host_pointers) api[host_pointers].buffer_host_pointer = NULL;
  xrt_context *ctx = tu_context(false);
  assert_int_equal(xrt_context_register_plugin(ctx, "noregion",
                                               &api[host_pointers], NULL),
                   XRT_OK);
  xrt_client *c = tu_client_of(ctx, "noregion", NDEV);
  float x[R * C];
  fill(x);
  xrt_sharding_spec ch = tu_spec_chunked(2, 0, NDEV), re = tu_spec_replicated(2, NDEV),
                    c42 = tu_spec_chunked2(4, 2);
  xrt_variable *v = make_var(c, "w", x, &ch, ids8, NDEV);
  xrt_client_stats s0, s1;
  assert_int_equal(xrt_client_get_stats(c, &s0), XRT_OK);
  assert_int_equal(reshard1(c, v, &c42, ids8r, NDEV), XRT_OK);
  assert_int_equal(xrt_client_get_stats(c, &s1), XRT_OK);
  /* Each new [4][3] piece takes two half rows-blocks of old chunks. */
  assert_int_equal(s1.device_copies - s0.device_copies, 2 * NDEV);
  assert_values(v, x, R * C);
  assert_int_equal(reshard1(c, v, &re, ids8, NDEV), XRT_OK);
  assert_values(v, x, R * C);
  assert_int_equal(reshard1(c, v, &ch, ids8, NDEV), XRT_OK);
  assert_values(v, x, R * C);
  xrt_variable_release(v);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(ctx), XRT_OK);
}

static void test_region_copy_fallback(void **state) {
  (void)state;
  reshard_without_region_copies(false);
  reshard_without_region_copies(true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_to_host),
      cmocka_unit_test(test_format_keys),
      cmocka_unit_test(test_reshard_chunk_replicated),
      cmocka_unit_test(test_reshard_multi_and_keep),
      cmocka_unit_test(test_reshard_noop_moves_nothing),
      cmocka_unit_test(test_execute_sgd_step),
      cmocka_unit_test(test_save_load),
      cmocka_unit_test(test_bad_formats_leave_variable),
      cmocka_unit_test(test_transfer_fault_is_atomic),
      cmocka_unit_test(test_memory_pressure),
      cmocka_unit_test(test_fault_kinds_and_stats),
      cmocka_unit_test(test_region_copy_fallback),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
