/*
 * spec_util.h - sharding specs built in one call, shared by the tests
 * (through test_util.h) and the benchmarks (bench_reshard.c).  It uses
 * only xrt.h, not cmocka, so a benchmark can include it.
 */
#ifndef XRT_SPEC_UTIL_H
#define XRT_SPEC_UTIL_H

#include "../xrt.h"

/* A rank-dimensional spec over one mesh dimension, sharding axis 0 (the
 * caller says how the array's dimensions are split). */
static inline xrt_sharding_spec tu_spec_axis0(int rank) {
  xrt_sharding_spec s;
  xrt_sharding_spec_init(&s, rank);
  s.num_mesh_dims = 1;
  s.mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  s.mesh[0].axis = 0;
  return s;
}

/* Chunked n ways on dimension dim of a rank-dimensional array, the chunks
 * over mesh axis 0 (n devices). */
static inline xrt_sharding_spec tu_spec_chunked(int rank, int dim, int64_t n) {
  xrt_sharding_spec s = tu_spec_axis0(rank);
  s.dims[dim].kind = XRT_DIM_CHUNKED;
  s.dims[dim].num_chunks = 1;
  s.dims[dim].chunks[0] = n;
  return s;
}

/* Chunked a ways on dimension 0 (mesh axis 0) and b ways on dimension 1
 * (mesh axis 1) of a 2-d array: a * b devices. */
static inline xrt_sharding_spec tu_spec_chunked2(int64_t a, int64_t b) {
  xrt_sharding_spec s = tu_spec_chunked(2, 0, a);
  s.dims[1].kind = XRT_DIM_CHUNKED;
  s.dims[1].num_chunks = 1;
  s.dims[1].chunks[0] = b;
  s.num_mesh_dims = 2;
  s.mesh[1].kind = XRT_MESH_SHARDED_AXIS;
  s.mesh[1].axis = 1;
  return s;
}

/* Dimension 0 (of size n) unstacked over mesh axis 0: n devices. */
static inline xrt_sharding_spec tu_spec_unstacked(int rank, int64_t n) {
  xrt_sharding_spec s = tu_spec_axis0(rank);
  s.dims[0].kind = XRT_DIM_UNSTACKED;
  s.dims[0].size = n;
  return s;
}

/* The whole rank-dimensional array on each of n devices. */
static inline xrt_sharding_spec tu_spec_replicated(int rank, int64_t n) {
  xrt_sharding_spec s;
  xrt_sharding_spec_init(&s, rank);
  s.num_mesh_dims = 1;
  s.mesh[0].kind = XRT_MESH_REPLICATED;
  s.mesh[0].replicas = n;
  return s;
}

#endif /* XRT_SPEC_UTIL_H */
