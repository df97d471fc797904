/*
 * test_sharding_edges.c - sharding specs and sharded arrays
 * (src/core/sharding.c) on what test_sharding.c leaves out: a table of
 * malformed specs, one field wrong each (Unstacked sizes, chunk counts
 * and factors, more sharded axes than mesh dimensions, unknown kinds,
 * Replicated counts, ShardedAxis indices, ranks, mesh sizes past 2^20
 * devices) with the message each must give; piece shapes that are
 * negative or overflow; shard starts outside the mesh; and the argument
 * checks of the sharded-array calls (a destination too small, devices and
 * buffers of another client or released, shard indices, arguments of
 * xrt_execute_sharded from two clients or of two device counts); host
 * memory running out at each allocation of an upload and a read of
 * staged (non-contiguous) pieces.
 */
#include "test_util.h"

/* A rank-2 spec over 2 devices: dim 0 chunked by 2, mesh ShardedAxis(0). */
static xrt_sharding_spec chunked2(void) {
  xrt_sharding_spec s = tu_spec_chunked(2, 0, 2);
  return s;
}

typedef void (*spec_edit)(xrt_sharding_spec *s);

static void e_unstacked0(xrt_sharding_spec *s) {
  s->dims[1].kind = XRT_DIM_UNSTACKED;
  s->dims[1].size = 0;
}
static void e_chunks0(xrt_sharding_spec *s) { s->dims[0].num_chunks = 0; }
static void e_chunks9(xrt_sharding_spec *s) { s->dims[0].num_chunks = 9; }
static void e_factor0(xrt_sharding_spec *s) { s->dims[0].chunks[0] = 0; }
static void e_factor_big(xrt_sharding_spec *s) {
  s->dims[0].chunks[0] = ((int64_t)1 << 20) + 1;
}
static void e_dim_kind(xrt_sharding_spec *s) {
  s->dims[1].kind = (xrt_dim_sharding_kind)7;
}
static void e_too_many_chunks(xrt_sharding_spec *s) {
  /* 8 factors on each of two dimensions: 16 axes fill the mesh, and a
   * third dimension's would be the 17th */
  *s = (xrt_sharding_spec){0};
  xrt_sharding_spec_init(s, 3);
  for (int d = 0; d < 3; d++) {
    s->dims[d].kind = XRT_DIM_CHUNKED;
    s->dims[d].num_chunks = d < 2 ? 8 : 1;
    for (int i = 0; i < s->dims[d].num_chunks; i++) s->dims[d].chunks[i] = 1;
  }
}
static void e_too_many_unstacked(xrt_sharding_spec *s) {
  *s = (xrt_sharding_spec){0};
  xrt_sharding_spec_init(s, 3);
  for (int d = 0; d < 2; d++) {
    s->dims[d].kind = XRT_DIM_CHUNKED;
    s->dims[d].num_chunks = 8;
    for (int i = 0; i < 8; i++) s->dims[d].chunks[i] = 1;
  }
  s->dims[2].kind = XRT_DIM_UNSTACKED;
  s->dims[2].size = 2;
}
static void e_replicas0(xrt_sharding_spec *s) {
  s->num_mesh_dims = 2;
  s->mesh[1].kind = XRT_MESH_REPLICATED;
  s->mesh[1].replicas = 0;
}
static void e_replicas_big(xrt_sharding_spec *s) {
  s->num_mesh_dims = 2;
  s->mesh[1].kind = XRT_MESH_REPLICATED;
  s->mesh[1].replicas = ((int64_t)1 << 20) + 1;
}
static void e_mesh_kind(xrt_sharding_spec *s) {
  s->mesh[0].kind = (xrt_mesh_mapping_kind)5;
}
static void e_axis_neg(xrt_sharding_spec *s) { s->mesh[0].axis = -1; }
static void e_axis_big(xrt_sharding_spec *s) { s->mesh[0].axis = 1; }
static void e_axis_twice(xrt_sharding_spec *s) {
  s->num_mesh_dims = 2;
  s->mesh[1] = s->mesh[0];
}
static void e_unmapped(xrt_sharding_spec *s) { s->num_mesh_dims = 0; }
static void e_rank_neg(xrt_sharding_spec *s) { s->rank = -1; }
static void e_rank_big(xrt_sharding_spec *s) { s->rank = XRT_MAX_RANK + 1; }
static void e_mesh_neg(xrt_sharding_spec *s) { s->num_mesh_dims = -1; }
static void e_mesh_big(xrt_sharding_spec *s) {
  s->num_mesh_dims = XRT_MAX_MESH_DIMS + 1;
}
static void e_mesh_huge(xrt_sharding_spec *s) {
  /* 2 x 2^10 x 2^10 devices: past 2^20 at the third mesh dimension */
  s->num_mesh_dims = 3;
  s->mesh[1].kind = XRT_MESH_REPLICATED;
  s->mesh[1].replicas = 1024;
  s->mesh[2].kind = XRT_MESH_REPLICATED;
  s->mesh[2].replicas = 1024;
}

static const struct {
  spec_edit edit;
  const char *msg;
} bad_specs[] = {
    {e_unstacked0, "dimension 1: Unstacked size 0 is not positive"},
    {e_chunks0, "dimension 0: 0 chunk factors, expected 1..8"},
    {e_chunks9, "dimension 0: 9 chunk factors, expected 1..8"},
    {e_factor0, "dimension 0: chunk factor 0 is 0, expected 1..1048576"},
    {e_factor_big, "chunk factor 0 is 1048577"},
    {e_dim_kind, "dimension 1 has an unknown kind 7"},
    {e_too_many_chunks, "dimension 2: more than 16 sharded axes"},
    {e_too_many_unstacked, "dimension 2: more than 16 sharded axes"},
    {e_replicas0, "mesh dimension 1: Replicated(0) must be in 1..1048576"},
    {e_replicas_big, "Replicated(1048577)"},
    {e_mesh_kind, "mesh dimension 0 has an unknown kind 5"},
    {e_axis_neg, "mesh dimension 0: ShardedAxis(-1) but the spec has 1 "
                 "sharded axes"},
    {e_axis_big, "ShardedAxis(1) but the spec has 1"},
    {e_axis_twice, "sharded axis 0 is mapped twice (mesh dimensions 0 and 1)"},
    {e_unmapped, "sharded axis 0 is not mapped to any mesh dimension"},
    {e_rank_neg, "rank -1 is outside 0.."},
    {e_rank_big, "rank 17 is outside 0..16"},
    {e_mesh_neg, "-1 mesh dimensions, expected 0..16"},
    {e_mesh_big, "17 mesh dimensions, expected 0..16"},
    {e_mesh_huge, "the mesh spans more than 1048576 devices"},
};

static void test_malformed_specs(void **state) {
  (void)state;
  xrt_shape sh = TU_SHAPE(XRT_F32, 4, 2);
  xrt_shape sh3 = TU_SHAPE(XRT_F32, 4, 2, 2);
  for (size_t i = 0; i < TU_COUNT(bad_specs); i++) {
    xrt_sharding_spec s = chunked2();
    bad_specs[i].edit(&s);
    const xrt_shape *l = s.rank == 3 ? &sh3 : &sh;
    if (xrt_sharding_spec_validate(&s, l) != XRT_INVALID_ARGUMENT)
      fail_msg("spec %zu validated", i);
    TU_ASSERT_CONTAINS(xrt_last_error(), bad_specs[i].msg);
    assert_int_equal(xrt_sharding_spec_num_devices(&s), -1);
    xrt_shape out;
    assert_int_equal(xrt_sharding_spec_shard_shape(&s, l, &out),
                     XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(xrt_last_error(), bad_specs[i].msg);
    assert_int_equal(xrt_sharding_spec_logical_shape(&s, l, &out),
                     XRT_INVALID_ARGUMENT);
    int64_t start[XRT_MAX_RANK];
    assert_int_equal(xrt_sharding_spec_shard_start(&s, l, 0, start),
                     XRT_INVALID_ARGUMENT);
  }
  /* the good spec: 2 devices, pieces of [2][2] */
  xrt_sharding_spec s = chunked2();
  assert_int_equal(xrt_sharding_spec_validate(&s, &sh), XRT_OK);
  assert_int_equal(xrt_sharding_spec_num_devices(&s), 2);
  assert_int_equal(xrt_sharding_spec_num_devices(NULL), -1);
  assert_int_equal(xrt_sharding_spec_validate(NULL, &sh), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "sharding spec is NULL");
  assert_int_equal(xrt_sharding_spec_validate(&s, NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "logical shape is NULL");
  xrt_shape piece;
  assert_int_equal(xrt_sharding_spec_shard_shape(&s, &sh, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "out is NULL");
  assert_int_equal(xrt_sharding_spec_shard_shape(&s, &sh, &piece), XRT_OK);
  assert_int_equal(piece.dims[0], 2);
  assert_int_equal(piece.dims[1], 2);
  int64_t start[XRT_MAX_RANK];
  assert_int_equal(xrt_sharding_spec_shard_start(&s, &sh, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "start is NULL");
  assert_int_equal(xrt_sharding_spec_shard_start(&s, &sh, 1, start), XRT_OK);
  assert_int_equal(start[0], 2);
  assert_int_equal(start[1], 0);
  assert_int_equal(xrt_sharding_spec_shard_start(&s, &sh, 2, start),
                   XRT_OUT_OF_RANGE);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device 2 is outside 0..1");
  assert_int_equal(xrt_sharding_spec_shard_start(&s, &sh, -1, start),
                   XRT_OUT_OF_RANGE);
  /* logical shapes from pieces: NULLs, negative and overflowing pieces */
  xrt_shape l;
  assert_int_equal(xrt_sharding_spec_logical_shape(&s, NULL, &l),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "shard or out is NULL");
  assert_int_equal(xrt_sharding_spec_logical_shape(&s, &piece, NULL),
                   XRT_INVALID_ARGUMENT);
  xrt_shape neg = TU_SHAPE(XRT_F32, -1, 2);
  assert_int_equal(xrt_sharding_spec_logical_shape(&s, &neg, &l),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "piece dimension 0 (-1) is negative "
                                       "or too large");
  xrt_shape huge = TU_SHAPE(XRT_F32, INT64_MAX / 2 + 1, 2);
  assert_int_equal(xrt_sharding_spec_logical_shape(&s, &huge, &l),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "is negative or too large");
  xrt_shape neg1 = TU_SHAPE(XRT_F32, 2, -3); /* an unsharded dimension */
  assert_int_equal(xrt_sharding_spec_logical_shape(&s, &neg1, &l),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "piece dimension 1 (-3)");
  assert_int_equal(xrt_sharding_spec_logical_shape(&s, &piece, &l), XRT_OK);
  assert_int_equal(l.dims[0], 4);
  assert_int_equal(l.dims[1], 2);
}

/* The sharded-array calls' argument checks. */
static void test_array_arguments(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 0, 0), *other = tu_client(2, 0, 0);
  xrt_sharding_spec s = chunked2();
  xrt_shape sh = TU_SHAPE(XRT_F32, 4, 2), piece = TU_SHAPE(XRT_F32, 2, 2);
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  xrt_device *devs[2] = {xrt_client_device(c, 0), xrt_client_device(c, 1)};
  xrt_device *mixed[2] = {xrt_client_device(c, 0),
                          xrt_client_device(other, 1)};
  xrt_sharded_array *a = NULL;
  assert_int_equal(xrt_sharded_array_from_host(c, &sh, x, &s, mixed, 2, &a),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "devices[1] is not a device of");
  assert_null(a);
  assert_int_equal(xrt_sharded_array_from_host(c, &sh, x, &s, NULL, 2, &a),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_sharded_array_from_host(c, &sh, x, &s, devs, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "out_array is NULL");
  assert_int_equal(xrt_sharded_array_from_host(NULL, &sh, x, &s, devs, 2, &a),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "invalid client");
  assert_int_equal(xrt_sharded_array_from_host(c, &sh, x, &s, devs, 2, &a),
                   XRT_OK);
  /* to_host: too small, NULL */
  float back[8];
  assert_int_equal(xrt_sharded_array_to_host(a, back, sizeof back - 1),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "destination holds 31 bytes, the "
                                       "array has 32");
  assert_int_equal(xrt_sharded_array_to_host(a, NULL, 32),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "dst is NULL");
  assert_int_equal(xrt_sharded_array_to_host(a, back, sizeof back), XRT_OK);
  for (int i = 0; i < 8; i++) assert_true(back[i] == x[i]);
  /* shards, shape and spec */
  assert_null(xrt_sharded_array_shard(a, 2));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  assert_null(xrt_sharded_array_shard(a, -1));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  xrt_shape got;
  assert_int_equal(xrt_sharded_array_shape(a, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_sharded_array_shape(NULL, &got), XRT_INVALID_ARGUMENT);
  xrt_sharding_spec gs;
  assert_int_equal(xrt_sharded_array_spec(a, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_sharded_array_spec(NULL, &gs), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_sharded_array_spec(a, &gs), XRT_OK);
  assert_int_equal(gs.dims[0].chunks[0], 2);
  /* create from buffers: another client's buffer, a released one, NULL */
  xrt_buffer *b0 = NULL, *b1 = NULL, *ob = NULL, *dead = NULL;
  assert_int_equal(xrt_buffer_from_host(c, devs[0], &piece, x, &b0), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, devs[1], &piece, x + 4, &b1),
                   XRT_OK);
  assert_int_equal(xrt_buffer_from_host(other, xrt_client_device(other, 1),
                                        &piece, x + 4, &ob), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, devs[1], &piece, x + 4, &dead),
                   XRT_OK);
  xrt_buffer_release(dead);
  xrt_buffer *bad1[2] = {b0, ob}, *bad2[2] = {b0, dead};
  xrt_sharded_array *w = NULL;
  assert_int_equal(xrt_sharded_array_create(c, &sh, &s, bad1, 2, &w),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "buffers[1] is not a live buffer");
  assert_int_equal(xrt_sharded_array_create(c, &sh, &s, bad2, 2, &w),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "buffers[1] is not a live buffer");
  assert_int_equal(xrt_sharded_array_create(c, &sh, &s, NULL, 2, &w),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "buffers is NULL");
  /* create_global: a device of another client, another client's buffer */
  xrt_buffer *good[2] = {b0, b1};
  assert_int_equal(xrt_sharded_array_create_global(c, &sh, &s, mixed, good, 2,
                                                   &w),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "devices[1] is not a device of");
  assert_int_equal(xrt_sharded_array_create_global(c, &sh, &s, devs, bad1, 2,
                                                   &w),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "buffers[1] is not a live buffer");
  assert_int_equal(xrt_sharded_array_create_global(c, &sh, &s, NULL, good, 2,
                                                   &w),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "devices or buffers is NULL");
  assert_null(w);
  assert_int_equal(xrt_sharded_array_create_global(c, &sh, &s, devs, good, 2,
                                                   &w),
                   XRT_OK);
  assert_int_equal(xrt_sharded_array_to_host(w, back, sizeof back), XRT_OK);
  for (int i = 0; i < 8; i++) assert_true(back[i] == x[i]);
  /* execute_sharded: arguments of two clients, of two device counts */
  xrt_executable *e = tu_compile(
      c, "func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> "
         "tensor<2x2xf32> {\n"
         "  %0 = stablehlo.add %a, %b : tensor<2x2xf32>\n"
         "  func.return %0 : tensor<2x2xf32>\n}\n", 2, NULL);
  xrt_device *odevs[2] = {xrt_client_device(other, 0),
                          xrt_client_device(other, 1)};
  xrt_sharded_array *oa = NULL, *one = NULL;
  assert_int_equal(xrt_sharded_array_from_host(other, &sh, x, &s, odevs, 2,
                                               &oa), XRT_OK);
  xrt_sharding_spec whole;
  xrt_sharding_spec_init(&whole, 2);
  assert_int_equal(xrt_sharded_array_from_host(c, &sh, x, &whole, devs, 1,
                                               &one), XRT_OK);
  xrt_sharded_array *args[2] = {a, oa}, *out[1] = {NULL};
  assert_int_equal(xrt_execute_sharded(e, args, 2, out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 1 belongs to another");
  args[1] = one;
  assert_int_equal(xrt_execute_sharded(e, args, 2, out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 1 spans 1 devices, "
                                       "argument 0 spans 2");
  assert_int_equal(xrt_execute_sharded(e, NULL, 2, out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "args is NULL");
  assert_int_equal(xrt_execute_sharded(e, args, 2, NULL, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "outputs is NULL");
  assert_int_equal(xrt_execute_sharded(e, args, -1, out, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "negative count");
  /* and a good one: a + w = 2x, piece by piece */
  args[1] = w;
  assert_int_equal(xrt_execute_sharded(e, args, 2, out, 1, NULL, NULL),
                   XRT_OK);
  assert_int_equal(xrt_sharded_array_to_host(out[0], back, sizeof back),
                   XRT_OK);
  for (int i = 0; i < 8; i++) assert_true(back[i] == 2 * x[i]);
  xrt_sharded_array_release(out[0]);
  xrt_executable_release(e);
  xrt_sharded_array_release(one);
  xrt_sharded_array_release(oa);
  xrt_sharded_array_release(w); /* owns b0 and b1 */
  xrt_buffer_release(ob);
  xrt_sharded_array_release(a);
  xrt_client_release(other);
  xrt_client_release(c);
}


/* Host memory running out at each allocation of an upload and a read of
 * an array whose pieces are not contiguous in the host array (columns
 * cut in two: each piece is staged): each failure is RESOURCE_EXHAUSTED,
 * a read that succeeds has every value, and nothing leaks. */
static void test_out_of_memory(void **state) {
  (void)state;
  tu_counting_alloc a;
  xrt_client *c = tu_client_counted(2, &a);
  xrt_sharding_spec s = tu_spec_chunked(2, 1, 2);
  xrt_shape sh = TU_SHAPE(XRT_F32, 3, 4);
  float x[12], got[12];
  for (int i = 0; i < 12; i++) x[i] = (float)(i * i) - 5.5f;
  xrt_device *devs[2] = {xrt_client_device(c, 0), xrt_client_device(c, 1)};
  xrt_sharded_array *arr = NULL;
  int failures = 0;
  for (long k = 1; k < 200; k++) {
    tu_counting_arm(&a, k);
    xrt_status st = xrt_sharded_array_from_host(c, &sh, x, &s, devs, 2, &arr);
    bool injected = tu_counting_disarm(&a);
    if (st == XRT_OK) {
      if (!injected) break;
      xrt_sharded_array_release(arr);
      arr = NULL;
      continue;
    }
    assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
    assert_null(arr);
    failures++;
  }
  assert_non_null(arr);
  assert_true(failures >= 2);
  failures = 0;
  for (long k = 1; k < 200; k++) {
    memset(got, 0, sizeof got);
    tu_counting_arm(&a, k);
    xrt_status st = xrt_sharded_array_to_host(arr, got, sizeof got);
    bool injected = tu_counting_disarm(&a);
    if (st == XRT_OK) {
      for (int i = 0; i < 12; i++) assert_true(got[i] == x[i]);
      if (!injected) break;
      continue;
    }
    assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
    failures++;
  }
  assert_true(failures >= 2);
  xrt_sharded_array_release(arr);
  xrt_client_release(c);
  assert_int_equal(atomic_load(&a.live), 0);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_malformed_specs),
        cmocka_unit_test(test_array_arguments),
        cmocka_unit_test(test_out_of_memory))
