/*
 * test_sharding.c - sharding specs and sharded arrays: the spec math, host
 * split and assembly for every spec kind, and bad input.
 *
 * Every case describes where a device's piece comes from with its own
 * hand-written index arithmetic (a `map` function: device k and an index
 * into its piece give the index into the logical array), so the check does
 * not reuse xrt's general algorithm.
 */
#include <inttypes.h>

#include "test_util.h"

#define NDEV 8

typedef void (*map_fn)(int k, const int64_t *piece_idx, int64_t *logical_idx);

typedef struct split_case {
  const char *name;
  xrt_shape logical;
  xrt_sharding_spec spec;
  int num_devices;
  int devices[NDEV];  /* device ids, in mesh order */
  xrt_shape piece;    /* expected, by hand */
  map_fn map;
} split_case;

static xrt_dim_sharding no_sharding(void) {
  xrt_dim_sharding d;
  memset(&d, 0, sizeof d);
  d.kind = XRT_DIM_NO_SHARDING;
  return d;
}

static xrt_dim_sharding chunked(int n, const int64_t *c) {
  xrt_dim_sharding d = no_sharding();
  d.kind = XRT_DIM_CHUNKED;
  d.num_chunks = n;
  for (int i = 0; i < n; i++) d.chunks[i] = c[i];
  return d;
}
#define CHUNKED(...)                                                        \
  chunked((int)TU_COUNT(((int64_t[]){__VA_ARGS__})), (const int64_t[]){__VA_ARGS__})

static xrt_dim_sharding unstacked(int64_t size) {
  xrt_dim_sharding d = no_sharding();
  d.kind = XRT_DIM_UNSTACKED;
  d.size = size;
  return d;
}

static xrt_mesh_mapping sharded_axis(int axis) {
  xrt_mesh_mapping m = {XRT_MESH_SHARDED_AXIS, axis, 0};
  return m;
}

static xrt_mesh_mapping replicated(int64_t r) {
  xrt_mesh_mapping m = {XRT_MESH_REPLICATED, 0, r};
  return m;
}

static int64_t linear(const xrt_shape *s, const int64_t *idx) {
  int64_t l = 0;
  for (int d = 0; d < s->rank; d++) l = l * s->dims[d] + idx[d];
  return l;
}

/* Advances a row-major multi-index; false after the last one. */
static bool next_index(const xrt_shape *s, int64_t *idx) {
  for (int d = s->rank - 1; d >= 0; d--) {
    if (++idx[d] < s->dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/* The logical element at linear position l, as a double. */
static double logical_value(xrt_dtype t, int64_t l) {
  return t == XRT_F64 ? 0.5 * (double)l : (double)l;
}

static double read_value(xrt_dtype t, const void *p, int64_t i) {
  if (t == XRT_F64) return ((const double *)p)[i];
  return (double)((const int32_t *)p)[i];
}

static void *make_logical(const xrt_shape *s) {
  int64_t n = xrt_shape_numel(s);
  void *data = malloc(xrt_shape_bytes(s) ? xrt_shape_bytes(s) : 1);
  for (int64_t i = 0; i < n; i++) {
    if (s->dtype == XRT_F64) ((double *)data)[i] = logical_value(XRT_F64, i);
    else ((int32_t *)data)[i] = (int32_t)i;
  }
  return data;
}

static void assert_shape_eq(const xrt_shape *got, const xrt_shape *want) {
  assert_int_equal(got->dtype, want->dtype);
  assert_int_equal(got->rank, want->rank);
  for (int d = 0; d < want->rank; d++)
    assert_int_equal(got->dims[d], want->dims[d]);
}

/* Checks device k's piece element by element against the case's map. */
static void check_piece(const split_case *t, int k, xrt_buffer *b) {
  xrt_shape got;
  assert_int_equal(xrt_buffer_shape(b, &got), XRT_OK);
  assert_shape_eq(&got, &t->piece);
  assert_int_equal(xrt_device_id(xrt_buffer_device(b)), t->devices[k]);
  size_t bytes = xrt_shape_bytes(&t->piece);
  void *host = malloc(bytes ? bytes : 1);
  assert_int_equal(xrt_buffer_to_host(b, host, bytes), XRT_OK);
  int64_t pidx[XRT_MAX_RANK] = {0}, lidx[XRT_MAX_RANK];
  int64_t i = 0;
  if (xrt_shape_numel(&t->piece) > 0) do {
    t->map(k, pidx, lidx);
    double want = logical_value(t->logical.dtype, linear(&t->logical, lidx));
    double have = read_value(t->logical.dtype, host, i++);
    if (have != want)
      fail_msg("%s: device %d element %" PRId64 ": got %g want %g", t->name,
               k, i - 1, have, want);
  } while (next_index(&t->piece, pidx));
  free(host);
}

/* Splits, checks every piece and its start, assembles back. */
static void run_split_case(const split_case *t) {
  xrt_client *c = tu_client(NDEV, 0, 0);
  xrt_device *devs[NDEV];
  for (int k = 0; k < t->num_devices; k++)
    devs[k] = xrt_client_device(c, t->devices[k]);
  assert_int_equal(xrt_sharding_spec_validate(&t->spec, &t->logical), XRT_OK);
  assert_int_equal(xrt_sharding_spec_num_devices(&t->spec), t->num_devices);
  xrt_shape piece;
  assert_int_equal(xrt_sharding_spec_shard_shape(&t->spec, &t->logical,
                                                 &piece), XRT_OK);
  assert_shape_eq(&piece, &t->piece);
  xrt_shape back;
  assert_int_equal(xrt_sharding_spec_logical_shape(&t->spec, &piece, &back),
                   XRT_OK);
  assert_shape_eq(&back, &t->logical);

  void *data = make_logical(&t->logical);
  xrt_sharded_array *a = NULL;
  xrt_status st = xrt_sharded_array_from_host(c, &t->logical, data, &t->spec,
                                              devs, t->num_devices, &a);
  if (st) fail_msg("%s: from_host: %s", t->name, xrt_last_error());
  assert_int_equal(xrt_sharded_array_num_shards(a), t->num_devices);
  for (int k = 0; k < t->num_devices; k++) {
    check_piece(t, k, xrt_sharded_array_shard(a, k));
    int64_t start[XRT_MAX_RANK], zero[XRT_MAX_RANK] = {0}, want[XRT_MAX_RANK];
    assert_int_equal(xrt_sharding_spec_shard_start(&t->spec, &t->logical, k,
                                                   start), XRT_OK);
    t->map(k, zero, want);
    for (int d = 0; d < t->logical.rank; d++)
      if (start[d] != want[d])
        fail_msg("%s: device %d start[%d] = %" PRId64 ", want %" PRId64,
                 t->name, k, d, start[d], want[d]);
  }
  size_t bytes = xrt_shape_bytes(&t->logical);
  unsigned char *out = malloc(bytes ? bytes : 1);
  memset(out, 0xab, bytes); /* every byte must be overwritten */
  assert_int_equal(xrt_sharded_array_to_host(a, out, bytes), XRT_OK);
  assert_memory_equal(out, data, bytes);
  xrt_shape s;
  xrt_sharding_spec spec;
  assert_int_equal(xrt_sharded_array_shape(a, &s), XRT_OK);
  assert_shape_eq(&s, &t->logical);
  assert_int_equal(xrt_sharded_array_spec(a, &spec), XRT_OK);
  assert_int_equal(spec.num_mesh_dims, t->spec.num_mesh_dims);
  assert_int_equal(xrt_sharded_array_release(a), XRT_OK);
  free(out);
  free(data);
  xrt_client_release(c);
}

/* ---- the cases: each map is the case's own index arithmetic ---- */

/* 3x4, NoSharding x2, mesh [Replicated(4)]: every device has everything. */
static void map_identity(int k, const int64_t *p, int64_t *l) {
  (void)k;
  l[0] = p[0], l[1] = p[1];
}

/* 8x3, Chunked([4]) on dim 0, mesh [ShardedAxis(0)]: rows 2k, 2k+1. */
static void map_rows4(int k, const int64_t *p, int64_t *l) {
  l[0] = 2 * k + p[0], l[1] = p[1];
}

/* 3x8, Chunked([2,2]) on dim 1, mesh [ShardedAxis(0), ShardedAxis(1)]:
 * device k = (a0, a1) row-major, chunk a0*2 + a1 = k: columns 2k, 2k+1. */
static void map_cols_22(int k, const int64_t *p, int64_t *l) {
  int a0 = k / 2, a1 = k % 2;
  l[0] = p[0], l[1] = 2 * (a0 * 2 + a1) + p[1];
}

/* The same with mesh [ShardedAxis(1), ShardedAxis(0)]: device k has
 * a1 = k / 2 (outer mesh dim) and a0 = k % 2, chunk a0*2 + a1. */
static void map_cols_22_swapped(int k, const int64_t *p, int64_t *l) {
  int a1 = k / 2, a0 = k % 2;
  l[0] = p[0], l[1] = 2 * (a0 * 2 + a1) + p[1];
}

/* 4x6x2, Chunked([2]) on dim 0 and Chunked([3]) on dim 1, mesh [SA(0),
 * SA(1)]: 6 devices, k = a0*3 + a1, piece 2x2x2. */
static void map_two_dims(int k, const int64_t *p, int64_t *l) {
  l[0] = 2 * (k / 3) + p[0], l[1] = 2 * (k % 3) + p[1], l[2] = p[2];
}

/* 4x3, Unstacked(4) on dim 0: device k gets row k as a [3] piece. */
static void map_unstacked(int k, const int64_t *p, int64_t *l) {
  l[0] = k, l[1] = p[0];
}

/* 4x2, Chunked([2]) on dim 0, mesh [SA(0), Replicated(3)]: replication
 * innermost, k = a0*3 + r. */
static void map_repl_inner(int k, const int64_t *p, int64_t *l) {
  l[0] = 2 * (k / 3) + p[0], l[1] = p[1];
}

/* The same with mesh [Replicated(3), SA(0)]: k = r*2 + a0. */
static void map_repl_outer(int k, const int64_t *p, int64_t *l) {
  l[0] = 2 * (k % 2) + p[0], l[1] = p[1];
}

/* f64 2x4x3: Unstacked(2), Chunked([2]), NoSharding; mesh [SA(1),
 * Replicated(2), SA(0)]: k = (a1, r, a0) row-major, piece 2x3. */
static void map_mixed(int k, const int64_t *p, int64_t *l) {
  int a1 = k / 4, a0 = k % 2;
  l[0] = a0, l[1] = 2 * a1 + p[0], l[2] = p[1];
}

static split_case mixed_case(void) {
  split_case t = {
      .name = "mixed", .logical = TU_SHAPE(XRT_F64, 2, 4, 3),
      .num_devices = 8, .devices = {0, 1, 2, 3, 4, 5, 6, 7},
      .piece = TU_SHAPE(XRT_F64, 2, 3), .map = map_mixed,
      .spec = {.rank = 3, .dims = {unstacked(2), CHUNKED(2)},
               .num_mesh_dims = 3,
               .mesh = {sharded_axis(1), replicated(2), sharded_axis(0)}}};
  return t;
}

/* A 3-level Chunked([2,2,2]) on dim 1 with the mesh reversed: device k =
 * (a2, a1, a0) row-major, chunk a0*4 + a1*2 + a2. */
static void map_chunk_222(int k, const int64_t *p, int64_t *l) {
  int a2 = k / 4, a1 = (k / 2) % 2, a0 = k % 2;
  l[0] = p[0], l[1] = a0 * 4 + a1 * 2 + a2 + p[1];
}

/* A scalar replicated over 2 devices. */
static void map_scalar(int k, const int64_t *p, int64_t *l) {
  (void)k, (void)p, (void)l;
}

/* Every case of the table: split, check each piece against the case's own
 * map, assemble back. */
static void test_split_cases(void **state) {
  (void)state;
  const split_case cases[] = {
      {.name = "replicated", .logical = TU_SHAPE(XRT_S32, 3, 4),
       .num_devices = 4, .devices = {0, 1, 2, 3},
       .piece = TU_SHAPE(XRT_S32, 3, 4), .map = map_identity,
       .spec = {.rank = 2, .num_mesh_dims = 1, .mesh = {replicated(4)}}},
      {.name = "chunked", .logical = TU_SHAPE(XRT_S32, 8, 3),
       .num_devices = 4, .devices = {0, 1, 2, 3},
       .piece = TU_SHAPE(XRT_S32, 2, 3), .map = map_rows4,
       .spec = {.rank = 2, .dims = {CHUNKED(4)},
                .num_mesh_dims = 1, .mesh = {sharded_axis(0)}}},
      {.name = "chunked 2x2", .logical = TU_SHAPE(XRT_S32, 3, 8),
       .num_devices = 4, .devices = {0, 1, 2, 3},
       .piece = TU_SHAPE(XRT_S32, 3, 2), .map = map_cols_22,
       .spec = {.rank = 2, .dims = {[1] = CHUNKED(2, 2)},
                .num_mesh_dims = 2,
                .mesh = {sharded_axis(0), sharded_axis(1)}}},
      {.name = "axis order", .logical = TU_SHAPE(XRT_S32, 3, 8),
       .num_devices = 4, .devices = {4, 5, 6, 7},
       .piece = TU_SHAPE(XRT_S32, 3, 2), .map = map_cols_22_swapped,
       .spec = {.rank = 2, .dims = {[1] = CHUNKED(2, 2)},
                .num_mesh_dims = 2,
                .mesh = {sharded_axis(1), sharded_axis(0)}}},
      {.name = "two dims", .logical = TU_SHAPE(XRT_S32, 4, 6, 2),
       .num_devices = 6, .devices = {0, 1, 2, 3, 4, 5},
       .piece = TU_SHAPE(XRT_S32, 2, 2, 2), .map = map_two_dims,
       .spec = {.rank = 3, .dims = {CHUNKED(2), CHUNKED(3)},
                .num_mesh_dims = 2,
                .mesh = {sharded_axis(0), sharded_axis(1)}}},
      {.name = "unstacked", .logical = TU_SHAPE(XRT_S32, 4, 3),
       .num_devices = 4, .devices = {3, 2, 1, 0},
       .piece = TU_SHAPE(XRT_S32, 3), .map = map_unstacked,
       .spec = {.rank = 2, .dims = {unstacked(4)},
                .num_mesh_dims = 1, .mesh = {sharded_axis(0)}}},
      /* A device may hold several pieces: it repeats devices 3 and 2. */
      {.name = "repl inner", .logical = TU_SHAPE(XRT_S32, 4, 2),
       .num_devices = 6, .devices = {3, 2, 1, 0, 3, 2},
       .piece = TU_SHAPE(XRT_S32, 2, 2), .map = map_repl_inner,
       .spec = {.rank = 2, .dims = {CHUNKED(2)},
                .num_mesh_dims = 2, .mesh = {sharded_axis(0), replicated(3)}}},
      {.name = "repl outer", .logical = TU_SHAPE(XRT_S32, 4, 2),
       .num_devices = 6, .devices = {0, 1, 2, 3, 4, 5},
       .piece = TU_SHAPE(XRT_S32, 2, 2), .map = map_repl_outer,
       .spec = {.rank = 2, .dims = {CHUNKED(2)},
                .num_mesh_dims = 2, .mesh = {replicated(3), sharded_axis(0)}}},
      mixed_case(),
      {.name = "chunk 222", .logical = TU_SHAPE(XRT_S32, 2, 8),
       .num_devices = 8, .devices = {0, 1, 2, 3, 4, 5, 6, 7},
       .piece = TU_SHAPE(XRT_S32, 2, 1), .map = map_chunk_222,
       .spec = {.rank = 2, .dims = {[1] = CHUNKED(2, 2, 2)},
                .num_mesh_dims = 3,
                .mesh = {sharded_axis(2), sharded_axis(1), sharded_axis(0)}}},
      {.name = "scalar", .logical = TU_SCALAR(XRT_S32),
       .num_devices = 2, .devices = {6, 7},
       .piece = TU_SCALAR(XRT_S32), .map = map_scalar,
       .spec = {.rank = 0, .num_mesh_dims = 1, .mesh = {replicated(2)}}},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) run_split_case(&cases[i]);
}

/* ---- spec math by hand ---- */

static void test_spec_math_by_hand(void **state) {
  (void)state;
  split_case t = mixed_case();
  xrt_shape piece, logical;
  assert_int_equal(xrt_sharding_spec_num_devices(&t.spec), 8);
  assert_int_equal(xrt_sharding_spec_shard_shape(&t.spec, &t.logical, &piece),
                   XRT_OK);
  assert_int_equal(piece.rank, 2);
  assert_int_equal(piece.dims[0], 2);
  assert_int_equal(piece.dims[1], 3);
  xrt_shape p23 = TU_SHAPE(XRT_F64, 2, 3);
  assert_int_equal(xrt_sharding_spec_logical_shape(&t.spec, &p23, &logical),
                   XRT_OK);
  assert_int_equal(logical.rank, 3);
  assert_int_equal(logical.dims[0], 2);
  assert_int_equal(logical.dims[1], 4);
  assert_int_equal(logical.dims[2], 3);
  /* Device 5 = (a1 1, r 0, a0 1): row 1 of dim 0, chunk 1 of dim 1. */
  int64_t start[3];
  assert_int_equal(xrt_sharding_spec_shard_start(&t.spec, &t.logical, 5,
                                                 start), XRT_OK);
  assert_int_equal(start[0], 1);
  assert_int_equal(start[1], 2);
  assert_int_equal(start[2], 0);
  /* Device 2 = (0, 1, 0): a replica of device 0's piece. */
  assert_int_equal(xrt_sharding_spec_shard_start(&t.spec, &t.logical, 2,
                                                 start), XRT_OK);
  assert_int_equal(start[0], 0);
  assert_int_equal(start[1], 0);
  assert_int_equal(xrt_sharding_spec_shard_start(&t.spec, &t.logical, 8,
                                                 start), XRT_OUT_OF_RANGE);
  /* A fresh spec: no mesh, one device holding everything. */
  xrt_sharding_spec one;
  xrt_sharding_spec_init(&one, 2);
  assert_int_equal(xrt_sharding_spec_num_devices(&one), 1);
  /* Chunked([3, 2]) of 12: piece 2, device k = (a0, a1), chunk a0*2+a1. */
  xrt_sharding_spec s;
  xrt_sharding_spec_init(&s, 1);
  s.dims[0] = CHUNKED(3, 2);
  s.num_mesh_dims = 2;
  s.mesh[0] = sharded_axis(1);
  s.mesh[1] = sharded_axis(0);
  xrt_shape l12 = TU_SHAPE(XRT_S32, 12);
  /* Device 3 = (m0 = a1 = 1, m1 = a0 = 0) under mesh [SA(1), SA(0)] of
   * sizes (2, 3): 3 = 1*3 + 0, so chunk 0*2 + 1 = 1, start 2. */
  assert_int_equal(xrt_sharding_spec_shard_start(&s, &l12, 3, start), XRT_OK);
  assert_int_equal(start[0], 2);
  /* Device 2 = (0, 2): chunk 2*2 + 0 = 4, start 8. */
  assert_int_equal(xrt_sharding_spec_shard_start(&s, &l12, 2, start), XRT_OK);
  assert_int_equal(start[0], 8);
}

/* ---- bad specs ---- */

static void expect_invalid(const xrt_sharding_spec *s, xrt_shape logical,
                           const char *msg) {
  assert_int_equal(xrt_sharding_spec_validate(s, &logical),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), msg);
}

static void test_bad_specs(void **state) {
  (void)state;
  xrt_sharding_spec s;
  xrt_sharding_spec_init(&s, 2);
  s.dims[1] = CHUNKED(3);
  s.num_mesh_dims = 1;
  s.mesh[0] = sharded_axis(0);
  expect_invalid(&s, TU_SHAPE(XRT_F32, 2, 10),
                 "dimension 1: 3 chunks do not divide size 10");
  expect_invalid(&s, TU_SHAPE(XRT_F32, 2, 9, 1), "rank 2, the array has rank 3");

  xrt_sharding_spec_init(&s, 1);
  s.dims[0] = CHUNKED(2);
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "sharded axis 0 is not mapped");
  assert_int_equal(xrt_sharding_spec_num_devices(&s), -1);
  s.num_mesh_dims = 2;
  s.mesh[0] = sharded_axis(0);
  s.mesh[1] = sharded_axis(0);
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "sharded axis 0 is mapped twice");
  s.mesh[1] = sharded_axis(1);
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "ShardedAxis(1) but the spec has 1");
  s.num_mesh_dims = 1;
  s.dims[0] = unstacked(3);
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4),
                 "dimension 0: Unstacked(3) but the dimension has size 4");
  s.dims[0] = CHUNKED(0);
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "chunk factor 0 is 0");
  s.dims[0].num_chunks = XRT_MAX_CHUNKS + 1;
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "9 chunk factors");
  s.dims[0] = no_sharding();
  s.mesh[0] = replicated(0);
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "Replicated(0)");
  s.mesh[0].kind = (xrt_mesh_mapping_kind)7;
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "unknown kind 7");
  s.num_mesh_dims = XRT_MAX_MESH_DIMS + 1;
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "17 mesh dimensions");
  assert_int_equal(xrt_sharding_spec_num_devices(&s), -1);
  s.num_mesh_dims = 0;
  s.dims[0].kind = (xrt_dim_sharding_kind)9;
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "unknown kind 9");
  s.rank = -1;
  expect_invalid(&s, TU_SHAPE(XRT_F32, 4), "rank -1");
  assert_int_equal(xrt_sharding_spec_validate(NULL, NULL),
                   XRT_INVALID_ARGUMENT);

  /* logical_shape: the piece's rank must leave room for Unstacked dims. */
  xrt_sharding_spec_init(&s, 2);
  s.dims[0] = unstacked(4);
  s.num_mesh_dims = 1;
  s.mesh[0] = sharded_axis(0);
  xrt_shape p = TU_SHAPE(XRT_F32, 3, 3), out;
  assert_int_equal(xrt_sharding_spec_logical_shape(&s, &p, &out),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "needs pieces of rank 1, got 2");
}

/* ---- bad arrays and handles ---- */

static void chunk4_spec(xrt_sharding_spec *s) {
  xrt_sharding_spec_init(s, 1);
  s->dims[0] = CHUNKED(4);
  s->num_mesh_dims = 1;
  s->mesh[0] = sharded_axis(0);
}

static void test_bad_arrays(void **state) {
  (void)state;
  xrt_client *c = tu_client(4, 0, 0), *other = tu_client(4, 0, 0);
  xrt_device *devs[4], *foreign[4];
  for (int k = 0; k < 4; k++) {
    devs[k] = xrt_client_device(c, k);
    foreign[k] = xrt_client_device(other, k);
  }
  xrt_sharding_spec s;
  chunk4_spec(&s);
  xrt_shape l = TU_SHAPE(XRT_S32, 8);
  int32_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
  xrt_sharded_array *a = NULL;
  assert_int_equal(xrt_sharded_array_from_host(c, &l, data, &s, devs, 3, &a),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "spans 4 devices, 3 were given");
  assert_null(a);
  assert_int_equal(xrt_sharded_array_from_host(c, &l, data, &s, foreign, 4,
                                               &a), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "devices[0] is not a device of this");
  xrt_shape l10 = TU_SHAPE(XRT_S32, 10);
  assert_int_equal(xrt_sharded_array_from_host(c, &l10, data, &s, devs, 4,
                                               &a), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "4 chunks do not divide size 10");
  assert_int_equal(xrt_sharded_array_from_host(c, &l, NULL, &s, devs, 4, &a),
                   XRT_INVALID_ARGUMENT);

  assert_int_equal(xrt_sharded_array_from_host(c, &l, data, &s, devs, 4, &a),
                   XRT_OK);
  assert_int_equal(xrt_sharded_array_to_host(a, out, 7 * sizeof(int32_t)),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "destination holds 28 bytes");
  assert_null(xrt_sharded_array_shard(a, 4));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  assert_int_equal(xrt_sharded_array_release(a), XRT_OK);
  /* Stale handles are reported, never dereferenced. */
  assert_int_equal(xrt_sharded_array_release(a), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_sharded_array_to_host(a, out, sizeof out),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "invalid or released sharded array");
  assert_null(xrt_sharded_array_shard(a, 0));
  assert_int_equal(xrt_sharded_array_num_shards(a), -1);
  assert_int_equal(xrt_sharded_array_release(NULL), XRT_OK);
  xrt_client_release(other);
  xrt_client_release(c);
}

/* Wrapping existing buffers: the array owns them once created. */
static void test_create_from_buffers(void **state) {
  (void)state;
  xrt_client *c = tu_client(4, 0, 0);
  xrt_sharding_spec s;
  chunk4_spec(&s);
  xrt_shape l = TU_SHAPE(XRT_S32, 8), p = TU_SHAPE(XRT_S32, 2),
            wrong = TU_SHAPE(XRT_S32, 3);
  xrt_buffer *b[4], *bad;
  for (int k = 0; k < 4; k++) {
    int32_t v[2] = {10 * k, 10 * k + 1};
    assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, k), &p, v,
                                          &b[k]), XRT_OK);
  }
  int32_t v3[3] = {0, 0, 0};
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &wrong,
                                        v3, &bad), XRT_OK);
  xrt_sharded_array *a = NULL;
  xrt_buffer *dup[4] = {b[0], b[1], b[1], b[3]};
  assert_int_equal(xrt_sharded_array_create(c, &l, &s, dup, 4, &a),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "buffers[1] and buffers[2] are the same");
  xrt_buffer *mis[4] = {b[0], b[1], bad, b[3]};
  assert_int_equal(xrt_sharded_array_create(c, &l, &s, mis, 4, &a),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "buffers[2] is tensor<3xi32>, the spec's pieces are "
                     "tensor<2xi32>");
  assert_int_equal(xrt_sharded_array_create(c, &l, &s, b, 3, &a),
                   XRT_INVALID_ARGUMENT);
  assert_null(a);
  assert_int_equal(xrt_sharded_array_create(c, &l, &s, b, 4, &a), XRT_OK);
  int32_t out[8];
  assert_int_equal(xrt_sharded_array_to_host(a, out, sizeof out), XRT_OK);
  for (int k = 0; k < 4; k++) {
    assert_int_equal(out[2 * k], 10 * k);
    assert_int_equal(out[2 * k + 1], 10 * k + 1);
    assert_ptr_equal(xrt_sharded_array_shard(a, k), b[k]);
  }
  assert_int_equal(xrt_sharded_array_release(a), XRT_OK);
  /* The array released its buffers. */
  assert_int_equal(xrt_buffer_release(b[0]), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_release(bad), XRT_OK);
  xrt_client_release(c);
}

/* Client release frees the arrays still alive (checked by ASan's leak
 * detector) and makes their handles stale. */
static void test_client_release_frees_arrays(void **state) {
  (void)state;
  xrt_client *c = tu_client(4, 0, 0);
  xrt_device *devs[4];
  for (int k = 0; k < 4; k++) devs[k] = xrt_client_device(c, k);
  xrt_sharding_spec s;
  chunk4_spec(&s);
  xrt_shape l = TU_SHAPE(XRT_S32, 8);
  int32_t data[8] = {0};
  xrt_sharded_array *a = NULL, *b = NULL;
  assert_int_equal(xrt_sharded_array_from_host(c, &l, data, &s, devs, 4, &a),
                   XRT_OK);
  assert_int_equal(xrt_sharded_array_from_host(c, &l, data, &s, devs, 4, &b),
                   XRT_OK);
  xrt_client_release(c);
  assert_int_equal(xrt_sharded_array_num_shards(a), -1);
  assert_int_equal(xrt_sharded_array_release(b), XRT_INVALID_ARGUMENT);
}

/* Arrays with no elements split and assemble without touching data. */
static void test_empty_array(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 0, 0);
  xrt_device *devs[2] = {xrt_client_device(c, 0), xrt_client_device(c, 1)};
  xrt_sharding_spec s;
  xrt_sharding_spec_init(&s, 2);
  s.dims[1] = CHUNKED(2);
  s.num_mesh_dims = 1;
  s.mesh[0] = sharded_axis(0);
  xrt_shape l = TU_SHAPE(XRT_S32, 0, 4), piece;
  xrt_sharded_array *a = NULL;
  assert_int_equal(xrt_sharded_array_from_host(c, &l, NULL, &s, devs, 2, &a),
                   XRT_OK);
  assert_int_equal(xrt_buffer_shape(xrt_sharded_array_shard(a, 1), &piece),
                   XRT_OK);
  assert_int_equal(piece.rank, 2);
  assert_int_equal(piece.dims[0], 0);
  assert_int_equal(piece.dims[1], 2);
  assert_int_equal(xrt_sharded_array_to_host(a, NULL, 0), XRT_OK);
  assert_int_equal(xrt_sharded_array_release(a), XRT_OK);
  xrt_client_release(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split_cases),
      cmocka_unit_test(test_spec_math_by_hand),
      cmocka_unit_test(test_bad_specs),
      cmocka_unit_test(test_bad_arrays),
      cmocka_unit_test(test_create_from_buffers),
      cmocka_unit_test(test_client_release_frees_arrays),
      cmocka_unit_test(test_empty_array),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
