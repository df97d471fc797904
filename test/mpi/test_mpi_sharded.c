/*
 * test_mpi_sharded.c - sharded arrays, xrt_execute_sharded and pmap over
 * devices of several processes (issue #11), run by `make test-mpi` under
 * mpirun with 2 and 4 processes.
 *
 * Every process makes the same calls with the same arguments (SPMD, as
 * xrt.h's "Objects that span processes" asks).  Each process holds only
 * its own pieces; assembling to host gives every process the whole
 * array, compared to the source data or to a plain loop in the test.
 * Values are small integers, so float sums are exact in any order.
 */
#include <inttypes.h>

#include "mpi_util.h"

#define MS_D 2      /* devices per process */
#define MS_MAXN 64  /* global devices */

static struct {
  int me, np, n;  /* process index, processes, global devices */
  xrt_client *g;  /* joined: MS_D here, n in all */
} ms;

static xrt_device *ms_dev(int gid) {
  xrt_device *d = xrt_client_global_device(ms.g, gid);
  assert_non_null(d);
  return d;
}

/* Global devices in mesh order: gids[k] for every k < count. */
static void ms_devs(const int *gids, int count, xrt_device **out) {
  for (int k = 0; k < count; k++) out[k] = ms_dev(gids[k]);
}

static void ms_iota(int *gids, int count) {
  for (int k = 0; k < count; k++) gids[k] = k;
}

/* Device k of an order where neighbours sit on different processes:
 * device i of process p (gid p * MS_D + i) comes at k = i * np + p,
 * reversed. */
static void ms_interleaved(int *gids) {
  for (int k = 0; k < ms.n; k++) {
    int j = ms.n - 1 - k;
    gids[k] = (j % ms.np) * MS_D + j / ms.np;
  }
}

static float *ms_values(size_t count, float base) {
  float *v = (float *)malloc(count * sizeof(float));
  assert_non_null(v);
  for (size_t i = 0; i < count; i++) v[i] = base + (float)(i % 97);
  return v;
}

/* The piece of device k, cut out of the logical array by a loop of the
 * test's own (rank 1 or 2, Chunked or Unstacked or whole dimensions). */
static void ms_expected_piece(const xrt_sharding_spec *spec,
                              const xrt_shape *logical, const float *src,
                              int k, float *out, size_t *count) {
  int64_t start[XRT_MAX_RANK];
  assert_int_equal(xrt_sharding_spec_shard_start(spec, logical, k, start),
                   XRT_OK);
  int64_t ext[2] = {1, 1}, dims[2] = {1, 1};
  for (int d = 0; d < logical->rank; d++) {
    const xrt_dim_sharding *ds = &spec->dims[d];
    dims[d] = logical->dims[d];
    int64_t f = 1;
    for (int c = 0; ds->kind == XRT_DIM_CHUNKED && c < ds->num_chunks; c++)
      f *= ds->chunks[c];
    ext[d] = ds->kind == XRT_DIM_UNSTACKED ? 1 : logical->dims[d] / f;
  }
  if (logical->rank == 1) { /* as a [1, n] array */
    ext[1] = ext[0], dims[1] = dims[0], start[1] = start[0];
    ext[0] = dims[0] = 1, start[0] = 0;
  }
  size_t o = 0;
  for (int64_t i = 0; i < ext[0]; i++)
    for (int64_t j = 0; j < ext[1]; j++)
      out[o++] = src[(start[0] + i) * dims[1] + start[1] + j];
  *count = o;
}

/* from_host then to_host over the devices gids; checks every process
 * gets the source back, each local piece holds its cut of it and each
 * remote one is refused by name. */
static void ms_round_trip(const xrt_sharding_spec *spec,
                          const xrt_shape *logical, const int *gids,
                          int count) {
  xrt_device *devs[MS_MAXN];
  ms_devs(gids, count, devs);
  size_t elems = xrt_shape_bytes(logical) / sizeof(float);
  float *src = ms_values(elems, 1.0f);
  float *got = (float *)calloc(elems, sizeof(float));
  float *piece = (float *)calloc(elems, sizeof(float));
  float *want = (float *)calloc(elems, sizeof(float));
  assert_true(got && piece && want);
  xrt_sharded_array *a = NULL;
  if (xrt_sharded_array_from_host(ms.g, logical, src, spec, devs, count, &a))
    fail_msg("from_host: %s", xrt_last_error());
  assert_int_equal(xrt_sharded_array_num_shards(a), count);
  for (int k = 0; k < count; k++) {
    xrt_buffer *b = xrt_sharded_array_shard(a, k);
    if (gids[k] / MS_D != ms.me) {
      assert_null(b);
      assert_int_equal(xrt_last_status(), XRT_FAILED_PRECONDITION);
      TU_ASSERT_CONTAINS(xrt_last_error(), "held by process");
      continue;
    }
    assert_non_null(b);
    assert_ptr_equal(xrt_buffer_device(b), devs[k]);
    size_t c;
    ms_expected_piece(spec, logical, src, k, want, &c);
    assert_int_equal(xrt_buffer_to_host(b, piece, c * sizeof(float)), XRT_OK);
    assert_memory_equal(piece, want, c * sizeof(float));
  }
  if (xrt_sharded_array_to_host(a, got, elems * sizeof(float)))
    fail_msg("to_host: %s", xrt_last_error());
  assert_memory_equal(got, src, elems * sizeof(float));
  assert_int_equal(xrt_sharded_array_release(a), XRT_OK);
  free(src);
  free(got);
  free(piece);
  free(want);
}

/* ms_round_trip over every global device in order. */
static void ms_round_trip_all(const xrt_sharding_spec *spec,
                              const xrt_shape *logical) {
  int gids[MS_MAXN];
  ms_iota(gids, ms.n);
  ms_round_trip(spec, logical, gids, ms.n);
}

/* Rank-1 [len] in `chunks` Chunked pieces over mesh axis 0, then
 * `replicas` copies (mesh dimension 1) when more than 1. */
static void ms_chunked(xrt_sharding_spec *spec, int chunks, int replicas) {
  xrt_sharding_spec_init(spec, 1);
  spec->dims[0].kind = XRT_DIM_CHUNKED;
  spec->dims[0].num_chunks = 1;
  spec->dims[0].chunks[0] = chunks;
  spec->num_mesh_dims = 1;
  spec->mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  spec->mesh[0].axis = 0;
  if (replicas > 1) {
    spec->num_mesh_dims = 2;
    spec->mesh[1].kind = XRT_MESH_REPLICATED;
    spec->mesh[1].replicas = replicas;
  }
}

/* Rank-2, leading dimension Unstacked over n devices. */
static void ms_unstacked(xrt_sharding_spec *spec, int n) {
  xrt_sharding_spec_init(spec, 2);
  spec->dims[0].kind = XRT_DIM_UNSTACKED;
  spec->dims[0].size = n;
  spec->num_mesh_dims = 1;
  spec->mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  spec->mesh[0].axis = 0;
}

/* ---- round trips ---- */

static void test_round_trip_chunked(void **state) {
  (void)state;
  xrt_sharding_spec spec;
  ms_chunked(&spec, ms.n, 1);
  xrt_shape sh = TU_SHAPE(XRT_F32, 4 * ms.n);
  ms_round_trip_all(&spec, &sh);
}

/* [2 np, 6]: rows in np chunks, columns in 2, the mesh walking the
 * column axis first (pieces are not contiguous in the array). */
static void test_round_trip_2d(void **state) {
  (void)state;
  xrt_sharding_spec spec;
  xrt_sharding_spec_init(&spec, 2);
  for (int d = 0; d < 2; d++) {
    spec.dims[d].kind = XRT_DIM_CHUNKED;
    spec.dims[d].num_chunks = 1;
  }
  spec.dims[0].chunks[0] = ms.np;
  spec.dims[1].chunks[0] = MS_D;
  spec.num_mesh_dims = 2;
  spec.mesh[0].kind = spec.mesh[1].kind = XRT_MESH_SHARDED_AXIS;
  spec.mesh[0].axis = 1;
  spec.mesh[1].axis = 0;
  xrt_shape sh = TU_SHAPE(XRT_F32, 2 * ms.np, 6);
  ms_round_trip_all(&spec, &sh);
}

/* Chunks over the processes, each replicated on a process's devices. */
static void test_round_trip_replicated_last(void **state) {
  (void)state;
  xrt_sharding_spec spec;
  ms_chunked(&spec, ms.np, MS_D);
  xrt_shape sh = TU_SHAPE(XRT_F32, 3 * ms.np);
  ms_round_trip_all(&spec, &sh);
}

static void test_round_trip_unstacked(void **state) {
  (void)state;
  xrt_sharding_spec spec;
  ms_unstacked(&spec, ms.n);
  xrt_shape sh = TU_SHAPE(XRT_F32, ms.n, 5);
  ms_round_trip_all(&spec, &sh);
}

/* Devices alternate between processes, in reverse: replicas of a piece
 * sit on two processes, chunks come back in another order. */
static void test_round_trip_interleaved(void **state) {
  (void)state;
  int gids[MS_MAXN];
  ms_interleaved(gids);
  xrt_sharding_spec spec;
  ms_chunked(&spec, ms.n / 2, 2);
  xrt_shape sh = TU_SHAPE(XRT_F32, 2 * ms.n);
  ms_round_trip(&spec, &sh, gids, ms.n);
  ms_chunked(&spec, ms.n, 1);
  ms_round_trip(&spec, &sh, gids, ms.n);
}

/* Two devices, of the last process and of the first: the processes in
 * between hold nothing and still receive the array. */
static void test_round_trip_few_holders(void **state) {
  (void)state;
  int gids[2] = {ms.n - 1, 0};
  xrt_sharding_spec spec;
  ms_unstacked(&spec, 2);
  xrt_shape sh = TU_SHAPE(XRT_F32, 2, 7);
  ms_round_trip(&spec, &sh, gids, 2);
}

/* create_global over this process's own buffers, then assembled. */
static void test_create_global(void **state) {
  (void)state;
  int gids[MS_MAXN];
  ms_interleaved(gids);
  xrt_device *devs[MS_MAXN];
  ms_devs(gids, ms.n, devs);
  xrt_buffer *bufs[MS_MAXN] = {0};
  xrt_shape piece = TU_SHAPE(XRT_F32, 3);
  for (int k = 0; k < ms.n; k++) {
    if (gids[k] / MS_D != ms.me) continue;
    float v[3] = {(float)k, (float)(10 * k), (float)(100 * k)};
    assert_int_equal(xrt_buffer_from_host(ms.g, devs[k], &piece, v, &bufs[k]),
                     XRT_OK);
  }
  xrt_sharding_spec spec;
  ms_unstacked(&spec, ms.n);
  xrt_shape sh = TU_SHAPE(XRT_F32, ms.n, 3);
  xrt_sharded_array *a = NULL;
  if (xrt_sharded_array_create_global(ms.g, &sh, &spec, devs, bufs, ms.n, &a))
    fail_msg("create_global: %s", xrt_last_error());
  float got[MS_MAXN * 3];
  assert_int_equal(xrt_sharded_array_to_host(a, got, sizeof got), XRT_OK);
  for (int k = 0; k < ms.n; k++) {
    assert_true(got[3 * k] == (float)k);
    assert_true(got[3 * k + 1] == (float)(10 * k));
    assert_true(got[3 * k + 2] == (float)(100 * k));
  }
  assert_int_equal(xrt_sharded_array_release(a), XRT_OK);
}

/* On a client of this process alone, create_global is
 * xrt_sharded_array_create with a device check, and to_host is local. */
static void test_create_global_one_process(void **state) {
  (void)state;
  xrt_client_options co;
  xrt_client_options_init(&co);
  co.num_devices = 2;
  co.threads_per_device = 1;
  co.topology.process_index = 0;
  co.topology.process_count = 1;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  assert_int_equal(xrt_client_global_device_count(c), 2);
  xrt_device *devs[2] = {xrt_client_device(c, 1), xrt_client_device(c, 0)};
  xrt_shape piece = TU_SHAPE(XRT_F32, 2);
  float v[2][2] = {{1, 2}, {3, 4}};
  xrt_buffer *bufs[2];
  for (int k = 0; k < 2; k++)
    assert_int_equal(xrt_buffer_from_host(c, devs[k], &piece, v[k], &bufs[k]),
                     XRT_OK);
  xrt_sharding_spec spec;
  ms_chunked(&spec, 2, 1);
  xrt_shape sh = TU_SHAPE(XRT_F32, 4);
  xrt_sharded_array *a = NULL;
  xrt_device *swapped[2] = {devs[1], devs[0]};
  assert_int_equal(xrt_sharded_array_create_global(c, &sh, &spec, swapped,
                                                   bufs, 2, &a),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "buffers[0] is on global device 1");
  assert_int_equal(xrt_sharded_array_create_global(c, &sh, &spec, devs, bufs,
                                                   2, &a), XRT_OK);
  float got[4];
  assert_int_equal(xrt_sharded_array_to_host(a, got, sizeof got), XRT_OK);
  for (int i = 0; i < 4; i++) assert_true(got[i] == (float)(i + 1));
  assert_int_equal(xrt_sharded_array_release(a), XRT_OK);
  xrt_client_release(c);
}

/* ---- execution ---- */

static xrt_executable *ms_compile(const char *src, const int *gids, int n) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.num_replicas = n;
  co.device_assignment = gids;
  xrt_executable *exe = NULL;
  if (xrt_compile(ms.g, src, strlen(src), &co, &exe))
    fail_msg("compile: %s", xrt_last_error());
  return exe;
}

/* A [count, cols] f32 array of x, Unstacked over the devices gids. */
static xrt_sharded_array *ms_unstacked_from_host(const int *gids, int count,
                                                 int cols, const float *x) {
  xrt_device *devs[MS_MAXN];
  ms_devs(gids, count, devs);
  xrt_sharding_spec spec;
  ms_unstacked(&spec, count);
  xrt_shape sh = TU_SHAPE(XRT_F32, count, cols);
  xrt_sharded_array *a = NULL;
  assert_int_equal(xrt_sharded_array_from_host(ms.g, &sh, x, &spec, devs,
                                               count, &a), XRT_OK);
  return a;
}

/* x * x + 1 over [n, 3] Unstacked on an interleaved assignment. */
static void test_execute_elementwise(void **state) {
  (void)state;
  static const char src[] =
      "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
      "  %c = stablehlo.constant dense<1.0> : tensor<3xf32>\n"
      "  %m = stablehlo.multiply %a, %a : tensor<3xf32>\n"
      "  %r = stablehlo.add %m, %c : tensor<3xf32>\n"
      "  func.return %r : tensor<3xf32>\n}\n";
  int gids[MS_MAXN];
  ms_interleaved(gids);
  xrt_executable *exe = ms_compile(src, gids, ms.n);
  float *x = ms_values((size_t)ms.n * 3, -5.0f);
  xrt_sharded_array *a = ms_unstacked_from_host(gids, ms.n, 3, x), *out = NULL;
  xrt_event *done = NULL;
  if (xrt_execute_sharded(exe, &a, 1, &out, 1, NULL, &done))
    fail_msg("execute_sharded: %s", xrt_last_error());
  assert_int_equal(xrt_event_await(done), XRT_OK);
  xrt_event_release(done);
  xrt_shape osh;
  assert_int_equal(xrt_sharded_array_shape(out, &osh), XRT_OK);
  assert_int_equal(osh.rank, 2);
  assert_int_equal(osh.dims[0], ms.n);
  float got[MS_MAXN * 3];
  assert_int_equal(xrt_sharded_array_to_host(out, got, sizeof got), XRT_OK);
  for (int i = 0; i < ms.n * 3; i++) assert_true(got[i] == x[i] * x[i] + 1);
  for (int k = 0; k < ms.n; k++)
    assert_int_equal(xrt_sharded_array_shard(out, k) != NULL,
                     gids[k] / MS_D == ms.me);
  xrt_sharded_array_release(a);
  xrt_sharded_array_release(out);
  xrt_executable_release(exe);
  free(x);
}

/* psum: all_reduce over every replica; every row is the column sums. */
static void test_execute_psum(void **state) {
  (void)state;
  char src[2048];
  snprintf(src, sizeof src,
           "func.func @main(%%a: tensor<2xf32>) -> tensor<2xf32> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%a) ({\n"
           "    ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):\n"
           "      %%s = stablehlo.add %%x, %%y : tensor<f32>\n"
           "      stablehlo.return %%s : tensor<f32>\n"
           "  }) {replica_groups = dense<[[%s]]> : tensor<1x%dxi64>}\n"
           "    : (tensor<2xf32>) -> tensor<2xf32>\n"
           "  func.return %%r : tensor<2xf32>\n}\n",
           ms.n == 4 ? "0, 1, 2, 3" : "0, 1, 2, 3, 4, 5, 6, 7", ms.n);
  assert_true(ms.n == 4 || ms.n == 8);
  int gids[MS_MAXN];
  ms_iota(gids, ms.n);
  xrt_executable *exe = ms_compile(src, gids, ms.n);
  float x[MS_MAXN * 2], want[2] = {0, 0};
  for (int k = 0; k < ms.n; k++) {
    x[2 * k] = (float)(k + 1);
    x[2 * k + 1] = (float)(3 * k * k);
    want[0] += x[2 * k];
    want[1] += x[2 * k + 1];
  }
  xrt_sharded_array *a = ms_unstacked_from_host(gids, ms.n, 2, x), *out = NULL;
  if (xrt_execute_sharded(exe, &a, 1, &out, 1, NULL, NULL))
    fail_msg("execute_sharded: %s", xrt_last_error());
  float got[MS_MAXN * 2];
  assert_int_equal(xrt_sharded_array_to_host(out, got, sizeof got), XRT_OK);
  for (int k = 0; k < ms.n; k++) {
    assert_true(got[2 * k] == want[0]);
    assert_true(got[2 * k + 1] == want[1]);
  }
  xrt_sharded_array_release(a);
  xrt_sharded_array_release(out);
  xrt_executable_release(exe);
}

/* Two participants, on the last process and the first: the processes
 * in between run none but still call (launch ids stay in step: the
 * launch after it spans everyone), and all receive the results. */
static void test_execute_few(void **state) {
  (void)state;
  static const char src[] =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %r = stablehlo.negate %a : tensor<4xf32>\n"
      "  func.return %r : tensor<4xf32>\n}\n";
  int gids[2] = {ms.n - 1, 0};
  xrt_executable *exe = ms_compile(src, gids, 2);
  float x[8], got[8];
  for (int i = 0; i < 8; i++) x[i] = (float)(i * i - 3);
  xrt_sharded_array *a = ms_unstacked_from_host(gids, 2, 4, x), *out = NULL;
  for (int round = 0; round < 2; round++) {
    if (xrt_execute_sharded(exe, &a, 1, &out, 1, NULL, NULL))
      fail_msg("execute_sharded: %s", xrt_last_error());
    memset(got, 0, sizeof got);
    assert_int_equal(xrt_sharded_array_to_host(out, got, sizeof got), XRT_OK);
    for (int i = 0; i < 8; i++) assert_true(got[i] == -x[i]);
    xrt_sharded_array_release(out);
  }
  xrt_sharded_array_release(a);
  xrt_executable_release(exe);
  test_execute_psum(state);
}

/* Traces a + 2 b for the piece width. */
static xrt_status ms_source(void *user, const xrt_shape *shapes, int n,
                            char **out_text, size_t *out_len) {
  (void)user;
  if (n != 2 || shapes[0].rank != 1) return XRT_INVALID_ARGUMENT;
  int64_t w = shapes[0].dims[0];
  char *text = (char *)malloc(1024);
  if (!text) return XRT_RESOURCE_EXHAUSTED;
  snprintf(text, 1024,
           "func.func @main(%%a: tensor<%" PRId64 "xf32>, %%b: tensor<%" PRId64
           "xf32>) -> tensor<%" PRId64 "xf32> {\n"
           "  %%t = stablehlo.add %%b, %%b : tensor<%" PRId64 "xf32>\n"
           "  %%r = stablehlo.add %%a, %%t : tensor<%" PRId64 "xf32>\n"
           "  func.return %%r : tensor<%" PRId64 "xf32>\n}\n",
           w, w, w, w, w, w);
  *out_text = text;
  *out_len = strlen(text);
  return XRT_OK;
}

/* One pmap call over [n, w] arrays on the devices gids: a + 2 b. */
static void ms_pmap_once(xrt_pmap *p, const int *gids, int w) {
  xrt_device *devs[MS_MAXN];
  ms_devs(gids, ms.n, devs);
  xrt_sharding_spec spec;
  ms_unstacked(&spec, ms.n);
  xrt_shape sh = TU_SHAPE(XRT_F32, ms.n, w);
  size_t elems = (size_t)ms.n * (size_t)w;
  float *x = ms_values(elems, 1.0f), *y = ms_values(elems, 7.0f);
  float *got = (float *)calloc(elems, sizeof(float));
  assert_non_null(got);
  xrt_sharded_array *args[2] = {NULL, NULL}, *out = NULL;
  assert_int_equal(xrt_sharded_array_from_host(ms.g, &sh, x, &spec, devs,
                                               ms.n, &args[0]), XRT_OK);
  assert_int_equal(xrt_sharded_array_from_host(ms.g, &sh, y, &spec, devs,
                                               ms.n, &args[1]), XRT_OK);
  if (xrt_pmap_call(p, args, 2, &out, 1, NULL, NULL))
    fail_msg("pmap_call: %s", xrt_last_error());
  assert_int_equal(xrt_sharded_array_to_host(out, got, elems * sizeof(float)),
                   XRT_OK);
  for (size_t i = 0; i < elems; i++) assert_true(got[i] == x[i] + 2 * y[i]);
  xrt_sharded_array_release(args[0]);
  xrt_sharded_array_release(args[1]);
  xrt_sharded_array_release(out);
  free(x);
  free(y);
  free(got);
}

static void test_pmap(void **state) {
  (void)state;
  xrt_pmap_options o;
  xrt_pmap_options_init(&o);
  o.source = ms_source;
  xrt_pmap *p = NULL;
  assert_int_equal(xrt_pmap_create(ms.g, &o, &p), XRT_OK);
  int order[MS_MAXN];
  ms_interleaved(order);
  ms_pmap_once(p, order, 2);
  ms_pmap_once(p, order, 5);
  ms_pmap_once(p, order, 2); /* cached */
  assert_int_equal(xrt_pmap_num_compiled(p), 2);
  xrt_pmap_release(p);
}

/* ---- errors ---- */

static void test_errors(void **state) {
  (void)state;
  int gids[MS_MAXN];
  ms_iota(gids, ms.n);
  xrt_device *devs[MS_MAXN];
  ms_devs(gids, ms.n, devs);
  xrt_sharding_spec spec;
  ms_unstacked(&spec, ms.n);
  xrt_shape sh = TU_SHAPE(XRT_F32, ms.n, 2);
  float x[MS_MAXN * 2] = {0};
  xrt_sharded_array *a = NULL;
  /* A wrong device count. */
  assert_int_equal(xrt_sharded_array_from_host(ms.g, &sh, x, &spec, devs,
                                               ms.n - 1, &a),
                   XRT_INVALID_ARGUMENT);
  assert_null(a);
  /* shard() of another process's piece names it. */
  assert_int_equal(xrt_sharded_array_from_host(ms.g, &sh, x, &spec, devs,
                                               ms.n, &a), XRT_OK);
  int other = ((ms.me + 1) % ms.np) * MS_D;
  assert_null(xrt_sharded_array_shard(a, other));
  assert_int_equal(xrt_last_status(), XRT_FAILED_PRECONDITION);
  char want[64];
  snprintf(want, sizeof want, "held by process %d", (ms.me + 1) % ms.np);
  TU_ASSERT_CONTAINS(xrt_last_error(), want);
  assert_non_null(xrt_sharded_array_shard(a, ms.me * MS_D));
  /* An executable on other devices than the arguments': refused in every
   * process before any launch. */
  static const char neg[] =
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %r = stablehlo.negate %a : tensor<2xf32>\n"
      "  func.return %r : tensor<2xf32>\n}\n";
  int order[MS_MAXN];
  ms_interleaved(order);
  xrt_executable *exe = ms_compile(neg, order, ms.n);
  xrt_sharded_array *out = NULL;
  assert_int_equal(xrt_execute_sharded(exe, &a, 1, &out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "global device");
  assert_null(out);
  xrt_executable_release(exe);
  xrt_sharded_array_release(a);
  /* create_global: a buffer for a remote device, none for a local one,
   * a wrong count. */
  xrt_shape piece = TU_SHAPE(XRT_F32, 2);
  xrt_buffer *bufs[MS_MAXN] = {0}, *mine[MS_D];
  for (int i = 0; i < MS_D; i++) {
    assert_int_equal(xrt_buffer_from_host(ms.g, ms_dev(ms.me * MS_D + i),
                                          &piece, x, &mine[i]), XRT_OK);
    bufs[ms.me * MS_D + i] = mine[i];
  }
  bufs[other] = mine[0];
  assert_int_equal(xrt_sharded_array_create_global(ms.g, &sh, &spec, devs,
                                                   bufs, ms.n, &a),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "belongs to process");
  bufs[other] = NULL;
  bufs[ms.me * MS_D + 1] = NULL;
  assert_int_equal(xrt_sharded_array_create_global(ms.g, &sh, &spec, devs,
                                                   bufs, ms.n, &a),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "is NULL");
  bufs[ms.me * MS_D + 1] = mine[1];
  assert_int_equal(xrt_sharded_array_create_global(ms.g, &sh, &spec, devs,
                                                   bufs, ms.n - 1, &a),
                   XRT_INVALID_ARGUMENT);
  assert_null(a);
  /* Then right: the array owns the buffers. */
  assert_int_equal(xrt_sharded_array_create_global(ms.g, &sh, &spec, devs,
                                                   bufs, ms.n, &a), XRT_OK);
  assert_ptr_equal(xrt_sharded_array_shard(a, ms.me * MS_D + 1), mine[1]);
  assert_int_equal(xrt_sharded_array_release(a), XRT_OK);
}

/* ---- last: a process that skips a collective ---- */

/* Process 0 skips a to_host the others make: they fail with
 * DEADLINE_EXCEEDED after a short timeout instead of hanging.  Its own
 * client, so that the main client's collective counters stay in step. */
static void test_skipped_to_host(void **state) {
  (void)state;
  xrt_client_options co = tm_client_options(MS_D, 0);
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  xrt_device *devs[MS_MAXN];
  for (int k = 0; k < ms.n; k++) devs[k] = xrt_client_global_device(c, k);
  xrt_sharding_spec spec;
  ms_chunked(&spec, ms.n, 1);
  xrt_shape sh = TU_SHAPE(XRT_F32, 2 * ms.n);
  float x[2 * MS_MAXN], got[2 * MS_MAXN];
  for (int i = 0; i < 2 * ms.n; i++) x[i] = (float)i;
  xrt_sharded_array *a = NULL;
  assert_int_equal(xrt_sharded_array_from_host(c, &sh, x, &spec, devs, ms.n,
                                               &a), XRT_OK);
  if (ms.me != 0) {
    tm_stall_begin();
    tm_stall_end(xrt_sharded_array_to_host(a, got, sizeof got),
                 "assembling a sharded array");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  assert_int_equal(xrt_sharded_array_release(a), XRT_OK);
  xrt_client_release(c);
}

/* ---- main ---- */

static int ms_setup(void **state) {
  (void)state;
  tm_world w = tm_join(MS_D, MS_MAXN, 0);
  ms.me = w.me;
  ms.np = w.np;
  ms.n = ms.np * MS_D;
  ms.g = w.client;
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_chunked),
      cmocka_unit_test(test_round_trip_2d),
      cmocka_unit_test(test_round_trip_replicated_last),
      cmocka_unit_test(test_round_trip_unstacked),
      cmocka_unit_test(test_round_trip_interleaved),
      cmocka_unit_test(test_round_trip_few_holders),
      cmocka_unit_test(test_create_global),
      cmocka_unit_test(test_create_global_one_process),
      cmocka_unit_test(test_execute_elementwise),
      cmocka_unit_test(test_execute_psum),
      cmocka_unit_test(test_execute_few),
      cmocka_unit_test(test_pmap),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_skipped_to_host),
  };
  return cmocka_run_group_tests(tests, ms_setup, tm_teardown) ? 1 : 0;
}
