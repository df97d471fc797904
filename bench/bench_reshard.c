/*
 * bench_reshard.c - resharding variables (issue #5), public API only.
 * MIT licensed.
 *
 * One 256 MiB f32 variable of shape [8192, 8192] on a client of 8
 * devices.  Prints "KEY = NUMBER" lines (best of several repetitions):
 *   reshard.chunk8_to_repl_256MiB.ms      Chunked([8]) on dim 0 over the 8
 *                                  devices -> Replicated(8) on them
 *   reshard.chunk8_to_repl_256MiB.memcpy_ms   memcpy of the bytes that must
 *                                  move (each device lacks 7 of the 8
 *                                  pieces: 8 x 224 MiB), single thread,
 *                                  on plain host buffers, same run
 *   reshard.chunk8_to_repl_256MiB.ratio_memcpy    memcpy_ms / ms
 *   reshard.chunk8_to_chunk4x2_256MiB.ms  Chunked([8]) on dim 0 ->
 *                                  Chunked([2]) on dim 0 x Chunked([4]) on
 *                                  dim 1, mesh (dim 0's axis, dim 1's):
 *                                  device k gets rows block k/4 (4096 rows)
 *                                  x columns block k%4 (2048 columns); it
 *                                  held 1024 of those rows, so 3/4 of every
 *                                  new piece comes from other devices
 *                                  (8 x 24 MiB must move)
 *   reshard.chunk8_to_chunk4x2_256MiB.memcpy_ms, ...ratio_memcpy   as above
 *                                  (each new piece is 4096 rows of 8 KiB
 *                                  read at a 32 KiB stride: even a plain C
 *                                  loop doing that copy on one thread
 *                                  reaches only about 0.5 of memcpy here)
 *   reshard.chunk8_to_chunk42rows_256MiB.ms, .memcpy_ms, .ratio_memcpy
 *                                  Chunked([8]) on dim 0 -> Chunked([4, 2])
 *                                  on dim 0 with the mesh transposed
 *                                  (ShardedAxis(1), ShardedAxis(0)): device
 *                                  k gets row block (k%4)*2 + k/4, so
 *                                  devices 0 and 7 keep theirs and six
 *                                  whole 32 MiB pieces move (192 MiB)
 *   reshard.noop.ns                reshard to the current format, mean per
 *                                  call over 100000 calls (best of 5)
 * The bytes that must move are computed from the two specs (per device:
 * the new piece minus what the old piece on that device already holds).
 * Every timed reshard is undone (untimed) before the next repetition, and
 * the variable's contents are checked after the last one of each kind.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#define BENCH_NAME "bench_reshard"
#include "bench_util.h"
#include "../test/spec_util.h"

#include <stdint.h>

enum { NDEV = 8, ROWS = 8192, COLS = 8192 };

static xrt_client *client;
static xrt_device *devs[NDEV];
static float *data;   /* the logical array */
static float *check;  /* to_host target */
static float *scratch;/* memcpy target */

static xrt_sharding_spec spec_chunk42_rows(void) {
  xrt_sharding_spec s = tu_spec_chunked(2, 0, NDEV);
  s.dims[0].num_chunks = 2;
  s.dims[0].chunks[0] = 4;
  s.dims[0].chunks[1] = 2;
  s.num_mesh_dims = 2;
  s.mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  s.mesh[0].axis = 1;
  s.mesh[1].kind = XRT_MESH_SHARDED_AXIS;
  s.mesh[1].axis = 0;
  return s;
}

/* Bytes the reshard from -> to must bring to devices: for each device,
 * its new piece minus the box its old piece already covers. */
static double bytes_to_move(const xrt_shape *l, const xrt_sharding_spec *from,
                            const xrt_sharding_spec *to) {
  xrt_shape pf, pt;
  if (xrt_sharding_spec_shard_shape(from, l, &pf) ||
      xrt_sharding_spec_shard_shape(to, l, &pt))
    return -1;
  double total = 0;
  for (int k = 0; k < NDEV; k++) {
    int64_t sf[2], st[2], overlap = 1;
    if (xrt_sharding_spec_shard_start(from, l, k, sf) ||
        xrt_sharding_spec_shard_start(to, l, k, st))
      return -1;
    for (int d = 0; d < 2; d++) {
      int64_t lo = sf[d] > st[d] ? sf[d] : st[d];
      int64_t hf = sf[d] + pf.dims[d], ht = st[d] + pt.dims[d];
      int64_t hi = hf < ht ? hf : ht;
      overlap *= hi > lo ? hi - lo : 0;
    }
    total += (double)(xrt_shape_numel(&pt) - overlap) * sizeof(float);
  }
  return total;
}

/* Best time of memcpy of `bytes` in NDEV equal copies (one per device's
 * share) from data to scratch, each copy between its own places (as far
 * as the 256 MiB buffers allow) so no copy reads or writes lines another
 * left in the cache. */
static double memcpy_time(double bytes, int reps) {
  size_t per = (size_t)(bytes / NDEV), total = (size_t)ROWS * COLS;
  size_t room = total - per / sizeof(float) + 1; /* floats */
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now_s();
    for (size_t d = 0; d < NDEV; d++) {
      size_t at = d * (per / sizeof(float)) % room / 16 * 16;
      memcpy(scratch + at, data + at, per);
    }
    double t = bench_now_s() - t0;
    if (scratch[0] != data[0]) return -1;
    if (t < best) best = t;
  }
  return best;
}

static xrt_status reshard(xrt_variable *v, const xrt_sharding_spec *s) {
  xrt_variable_format f = {s, devs, NDEV};
  return xrt_variables_reshard(&v, &f, 1, NULL);
}

/* Best time of from -> to (undone after each), checked after the last. */
static int bench_pair(xrt_variable *v, const char *key,
                      const xrt_sharding_spec *from,
                      const xrt_sharding_spec *to, int reps) {
  xrt_shape l = {XRT_F32, 2, {ROWS, COLS}};
  double move = bytes_to_move(&l, from, to);
  if (move <= 0) return bench_fail("bytes to move", XRT_INTERNAL);
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now_s();
    xrt_status s = reshard(v, to);
    double t = bench_now_s() - t0;
    if (s) return bench_fail(key, s);
    if (t < best) best = t;
    if (r == reps - 1) {
      s = xrt_variable_to_host(v, check, xrt_shape_bytes(&l));
      if (s) return bench_fail("to_host", s);
      if (memcmp(check, data, xrt_shape_bytes(&l))) {
        fprintf(stderr, BENCH_NAME ": %s: wrong contents\n", key);
        return 1;
      }
    }
    if ((s = reshard(v, from))) return bench_fail("reshard back", s);
  }
  double mem = memcpy_time(move, reps);
  if (mem < 0) return 1;
  printf("reshard.%s.ms = %.2f\n", key, best * 1e3);
  printf("reshard.%s.memcpy_ms = %.2f\n", key, mem * 1e3);
  printf("reshard.%s.ratio_memcpy = %.3f\n", key, mem / best);
  return 0;
}

static int bench_noop(xrt_variable *v, const xrt_sharding_spec *now) {
  enum { CALLS = 100000 };
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = bench_now_s();
    for (int i = 0; i < CALLS; i++) {
      xrt_status s = reshard(v, now);
      if (s) return bench_fail("no-op reshard", s);
    }
    double t = (bench_now_s() - t0) / CALLS;
    if (t < best) best = t;
  }
  printf("reshard.noop.ns = %.1f\n", best * 1e9);
  return 0;
}

int main(void) {
  size_t bytes = (size_t)ROWS * COLS * sizeof(float);
  data = malloc(bytes);
  check = malloc(bytes);
  scratch = malloc(bytes);
  if (!data || !check || !scratch) {
    fprintf(stderr, BENCH_NAME ": out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
    data[i] = (float)(i % 65521) * 0.5f;
  memset(check, 0, bytes); /* touch every page once before timing */
  memset(scratch, 0, bytes);
  client = bench_client(NDEV, 0);
  if (!client) return 1;
  for (int k = 0; k < NDEV; k++) devs[k] = xrt_client_device(client, k);
  xrt_sharding_spec chunk8 = tu_spec_chunked(2, 0, NDEV),
                    repl8 = tu_spec_replicated(2, NDEV),
                    chunk4x2 = tu_spec_chunked2(2, 4),
                    rows = spec_chunk42_rows();
  xrt_shape l = {XRT_F32, 2, {ROWS, COLS}};
  xrt_variable_format f = {&chunk8, devs, NDEV};
  xrt_variable *v = NULL;
  xrt_status s = xrt_variable_create(client, "w", &l, data, &f, &v);
  int rc = s ? bench_fail("create", s) : 0;
  if (!rc) rc = bench_pair(v, "chunk8_to_repl_256MiB", &chunk8, &repl8, 4);
  if (!rc)
    rc = bench_pair(v, "chunk8_to_chunk4x2_256MiB", &chunk8, &chunk4x2, 15);
  if (!rc)
    rc = bench_pair(v, "chunk8_to_chunk42rows_256MiB", &chunk8, &rows, 15);
  if (!rc) rc = bench_noop(v, &chunk8);
  xrt_variable_release(v);
  xrt_client_release(client);
  free(data);
  free(check);
  free(scratch);
  return rc;
}
