/*
 * test_mpi_collectives.c - several processes as one xrt system (issue
 * #11), run by `make test-mpi` under mpirun with 2 and 4 processes.
 *
 * Every process creates a client that joins the system (D devices here,
 * N*D in all) and a reference client of its own with N*D devices; a
 * program runs on both and the joined run must give, on each process's
 * devices, exactly what the single-process run gives there, and what a
 * plain loop in the test computes.  Values are small integers, so float
 * sums are exact whatever the order of reduction.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* setenv */
#endif
#include "mpi_util.h"

#define MT_D 2      /* devices per process */
#define MT_MAXP 64  /* participants */

static struct {
  int me, n;        /* process index, processes */
  xrt_client *g;    /* joined: MT_D here, n * MT_D in all */
  xrt_client *ref;  /* this process alone, n * MT_D devices */
} mt;

/* Runs @main of src on client c with one input per participant (host
 * data in + p * in_bytes), results to out + p * out_bytes for the
 * participants c addresses (*ran[p] = 1).  Returns the launch's status. */
static xrt_status mt_run(xrt_client *c, const char *src,
                         const xrt_shape *in_shape, const char *in,
                         size_t in_bytes, char *out, size_t out_bytes,
                         int *ran) {
  xrt_executable *exe = NULL;
  xrt_status s = xrt_compile(c, src, strlen(src), NULL, &exe);
  if (s) return s;
  int n = xrt_executable_num_replicas(exe) * xrt_executable_num_partitions(exe);
  assert_true(n <= MT_MAXP);
  xrt_buffer *args[MT_MAXP] = {0}, *outs[MT_MAXP] = {0};
  xrt_buffer *const *lists[MT_MAXP];
  xrt_buffer **olists[MT_MAXP];
  for (int p = 0; p < n; p++) {
    xrt_device *d = xrt_executable_device(exe, p);
    assert_non_null(d);
    ran[p] = xrt_device_is_addressable(d) == 1;
    lists[p] = ran[p] ? &args[p] : NULL;
    olists[p] = ran[p] ? &outs[p] : NULL;
    if (ran[p])
      assert_int_equal(xrt_buffer_from_host(c, d, in_shape,
                                            in + (size_t)p * in_bytes,
                                            &args[p]), XRT_OK);
  }
  xrt_event *done = NULL;
  s = xrt_execute_multi(exe, lists, n, 1, olists, 1, NULL, &done);
  if (!s) {
    s = xrt_event_await(done);
    xrt_event_release(done);
  }
  for (int p = 0; p < n; p++) {
    if (!s && ran[p])
      assert_int_equal(xrt_buffer_to_host(outs[p], out + (size_t)p * out_bytes,
                                          out_bytes), XRT_OK);
    xrt_buffer_release(args[p]);
    xrt_buffer_release(outs[p]);
  }
  xrt_executable_release(exe);
  return s;
}

/* src on the joined client and on the reference: both succeed, and agree
 * on every participant of this process; out gets the reference's results
 * for all n (so callers check them against their own loop). */
static void mt_compare_on(xrt_client *g, const char *src,
                          const xrt_shape *in_shape, const void *in,
                          size_t in_bytes, void *out, size_t out_bytes,
                          int n) {
  int ran[MT_MAXP], ran_ref[MT_MAXP];
  char *got = (char *)calloc((size_t)n, out_bytes);
  assert_non_null(got);
  xrt_status s = mt_run(g, src, in_shape, (const char *)in, in_bytes, got,
                        out_bytes, ran);
  if (s) fail_msg("joined run: %s", xrt_last_error());
  s = mt_run(mt.ref, src, in_shape, (const char *)in, in_bytes, (char *)out,
             out_bytes, ran_ref);
  if (s) fail_msg("reference run: %s", xrt_last_error());
  int mine = 0;
  for (int p = 0; p < n; p++) {
    assert_true(ran_ref[p]);
    mine += ran[p];
    if (ran[p])
      assert_memory_equal(got + (size_t)p * out_bytes,
                          (char *)out + (size_t)p * out_bytes, out_bytes);
  }
  assert_int_equal(mine, MT_D); /* default assignment: MT_D per process */
  free(got);
}

/* mt_compare_on the joined client mt.g. */
static void mt_compare(const char *src, const xrt_shape *in_shape,
                       const void *in, size_t in_bytes, void *out,
                       size_t out_bytes, int n) {
  mt_compare_on(mt.g, src, in_shape, in, in_bytes, out, out_bytes, n);
}

/* "[[0, 1, ...], ...]": ng groups of gs ids, member k of group g is
 * id(g, k). */
static void mt_groups(char *dst, size_t cap, int ng, int gs,
                      int (*id)(int g, int k)) {
  size_t o = (size_t)snprintf(dst, cap, "dense<[");
  for (int g = 0; g < ng; g++) {
    o += (size_t)snprintf(dst + o, cap - o, "%s[", g ? ", " : "");
    for (int k = 0; k < gs; k++)
      o += (size_t)snprintf(dst + o, cap - o, "%s%d", k ? ", " : "", id(g, k));
    o += (size_t)snprintf(dst + o, cap - o, "]");
  }
  snprintf(dst + o, cap - o, "]> : tensor<%dx%dxi64>", ng, gs);
}

static int mt_all(int g, int k) { (void)g; return k; }
/* Device i of every process: group i spans all processes. */
static int mt_across(int g, int k) { return k * MT_D + g; }
/* Pairs inside one process. */
static int mt_within(int g, int k) { return g * MT_D + k; }

/* An all_reduce program over n replicas: elem elements of type t,
 * reducer body (two tensor<t> arguments %x, %y, result %s). */
static void mt_all_reduce_src(char *src, size_t cap, int n, const char *t,
                              int elem, const char *body,
                              const char *groups) {
  snprintf(src, cap,
           "module @m attributes {mhlo.num_replicas = %d : i32} {\n"
           "func.func @main(%%a: tensor<%dx%s>) -> tensor<%dx%s> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%a) ({\n"
           "    ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):\n"
           "%s"
           "      stablehlo.return %%s : tensor<%s>\n"
           "  }) {replica_groups = %s}\n"
           "    : (tensor<%dx%s>) -> tensor<%dx%s>\n"
           "  return %%r : tensor<%dx%s>\n"
           "}\n}\n",
           n, elem, t, elem, t, t, t, body, t, groups, elem, t, elem, t, elem,
           t);
}

#define MT_ADD(t) "      %s = stablehlo.add %x, %y : tensor<" t ">\n"

/* ---- topology and devices ---- */

static void test_topology(void **state) {
  (void)state;
  xrt_mpi_options mo;
  xrt_mpi_options_init(&mo);
  assert_int_equal(xrt_mpi_init(&mo), XRT_FAILED_PRECONDITION);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  xrt_topology t;
  assert_int_equal(xrt_mpi_topology(&t), XRT_OK);
  assert_int_equal(t.process_index, rank);
  assert_int_equal(t.process_count, size);
  /* mpirun on one machine: one host, every process local to it. */
  assert_int_equal(t.host_index, 0);
  assert_int_equal(t.local_rank, rank);
  assert_int_equal(t.local_world_size, size);
  xrt_topology ct;
  assert_int_equal(xrt_client_topology(mt.g, &ct), XRT_OK);
  assert_int_equal(ct.process_index, rank);
  assert_int_equal(ct.process_count, size);
  assert_int_equal(xrt_client_topology(mt.ref, &ct), XRT_OK);
  assert_int_equal(ct.process_count, 1);
}

static void test_global_devices(void **state) {
  (void)state;
  assert_int_equal(xrt_client_device_count(mt.g), MT_D);
  assert_int_equal(xrt_client_global_device_count(mt.g), mt.n * MT_D);
  assert_int_equal(xrt_client_global_device_count(mt.ref), mt.n * MT_D);
  for (int gid = 0; gid < mt.n * MT_D; gid++) {
    xrt_device *d = xrt_client_global_device(mt.g, gid);
    assert_non_null(d);
    assert_int_equal(xrt_device_global_id(d), gid);
    assert_int_equal(xrt_device_process_index(d), gid / MT_D);
    int own = gid / MT_D == mt.me;
    assert_int_equal(xrt_device_is_addressable(d), own);
    if (own) { /* the same handle as the local device */
      assert_ptr_equal(d, xrt_client_device(mt.g, gid % MT_D));
      continue;
    }
    float x = 1;
    xrt_shape sh = TU_SCALAR(XRT_F32);
    xrt_buffer *b = NULL;
    assert_int_equal(xrt_buffer_from_host(mt.g, d, &sh, &x, &b),
                     XRT_INVALID_ARGUMENT);
    assert_null(b);
  }
  assert_null(xrt_client_global_device(mt.g, mt.n * MT_D));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  assert_null(xrt_client_global_device(mt.g, -1));
}

/* ---- all_reduce ---- */

/* Sum of f32 over every device of every process, 37 elements. */
static void test_all_reduce_sum_all(void **state) {
  (void)state;
  enum { E = 37 };
  int n = mt.n * MT_D;
  char groups[512], src[4096];
  mt_groups(groups, sizeof groups, 1, n, mt_all);
  mt_all_reduce_src(src, sizeof src, n, "f32", E, MT_ADD("f32"), groups);
  float in[MT_MAXP][E], out[MT_MAXP][E];
  for (int p = 0; p < n; p++)
    for (int i = 0; i < E; i++) in[p][i] = (float)((p + 1) * 100 + i);
  xrt_shape sh = TU_SHAPE(XRT_F32, E);
  mt_compare(src, &sh, in, sizeof in[0], out, sizeof out[0], n);
  for (int p = 0; p < n; p++)
    for (int i = 0; i < E; i++) {
      float want = 0;
      for (int q = 0; q < n; q++) want += in[q][i];
      assert_true(out[p][i] == want);
    }
}

/* Groups that span processes and groups inside one, i32 max (the
 * simulator's fast path) and a compare/select max (the reducer body). */
static void check_groups(const char *t, const char *body, int spanning) {
  enum { E = 11 };
  int n = mt.n * MT_D;
  char groups[512], src[4096];
  if (spanning) mt_groups(groups, sizeof groups, MT_D, mt.n, mt_across);
  else mt_groups(groups, sizeof groups, mt.n, MT_D, mt_within);
  mt_all_reduce_src(src, sizeof src, n, t, E, body, groups);
  int32_t in[MT_MAXP][E], out[MT_MAXP][E];
  for (int p = 0; p < n; p++)
    for (int i = 0; i < E; i++) in[p][i] = (p * 37 + i * 11) % 23 - 9;
  xrt_shape sh = TU_SHAPE(XRT_S32, E);
  mt_compare(src, &sh, in, sizeof in[0], out, sizeof out[0], n);
  for (int p = 0; p < n; p++)
    for (int i = 0; i < E; i++) {
      int32_t want = INT32_MIN;
      for (int q = 0; q < n; q++) {
        int same = spanning ? q % MT_D == p % MT_D : q / MT_D == p / MT_D;
        if (same && in[q][i] > want) want = in[q][i];
      }
      assert_int_equal(out[p][i], want);
    }
}

static void test_all_reduce_max_across(void **state) {
  (void)state;
  check_groups("i32", "      %s = stablehlo.maximum %x, %y : tensor<i32>\n",
               1);
}

static void test_all_reduce_max_within(void **state) {
  (void)state;
  check_groups("i32", "      %s = stablehlo.maximum %x, %y : tensor<i32>\n",
               0);
}

static void test_all_reduce_body_across(void **state) {
  (void)state;
  check_groups("i32",
               "      %c = stablehlo.compare GT, %x, %y : (tensor<i32>, "
               "tensor<i32>) -> tensor<i1>\n"
               "      %s = stablehlo.select %c, %x, %y : tensor<i1>, "
               "tensor<i32>\n",
               1);
}

/* Fewer elements than slices and processes: some pieces are empty. */
static void test_all_reduce_tiny(void **state) {
  (void)state;
  int n = mt.n * MT_D;
  char groups[512], src[4096];
  mt_groups(groups, sizeof groups, 1, n, mt_all);
  mt_all_reduce_src(src, sizeof src, n, "i64", 1, MT_ADD("i64"), groups);
  int64_t in[MT_MAXP], out[MT_MAXP], want = 0;
  for (int p = 0; p < n; p++) want += in[p] = (int64_t)p * p - 3;
  xrt_shape sh = TU_SHAPE(XRT_S64, 1);
  mt_compare(src, &sh, in, sizeof in[0], out, sizeof out[0], n);
  for (int p = 0; p < n; p++) assert_true(out[p] == want);
}

/* 1 Mi f32 per device: the streaming copies and several MPI messages. */
static void test_all_reduce_large(void **state) {
  (void)state;
  enum { E = 1 << 20 };
  int n = mt.n * MT_D;
  char groups[512], src[4096];
  mt_groups(groups, sizeof groups, 1, n, mt_all);
  mt_all_reduce_src(src, sizeof src, n, "f32", E, MT_ADD("f32"), groups);
  float *in = (float *)malloc(sizeof(float) * E * (size_t)n);
  float *out = (float *)malloc(sizeof(float) * E * (size_t)n);
  assert_true(in && out);
  for (int p = 0; p < n; p++)
    for (int i = 0; i < E; i++) in[(size_t)p * E + i] = (float)((i + p) % 1000);
  xrt_shape sh = TU_SHAPE(XRT_F32, E);
  mt_compare(src, &sh, in, sizeof(float) * E, out, sizeof(float) * E, n);
  for (int i = 0; i < E; i += 997) {
    float want = 0;
    for (int q = 0; q < n; q++) want += in[(size_t)q * E + i];
    for (int p = 0; p < n; p++) assert_true(out[(size_t)p * E + i] == want);
  }
  free(in);
  free(out);
}

/* One all_reduce over every device of E elements of type t (es bytes;
 * inputs small integers, so any order of summing is exact) on client g,
 * each element checked against a loop: the sum, or the maximum with a
 * reducer body. */
static void check_chunked(xrt_client *g, const char *t, xrt_dtype dt,
                          size_t es, int E, int max) {
  int n = mt.n * MT_D;
  char groups[512], src[4096], body[256];
  mt_groups(groups, sizeof groups, 1, n, mt_all);
  if (max)
    snprintf(body, sizeof body,
             "      %%c = stablehlo.compare GT, %%x, %%y : (tensor<%s>, "
             "tensor<%s>) -> tensor<i1>\n"
             "      %%s = stablehlo.select %%c, %%x, %%y : tensor<i1>, "
             "tensor<%s>\n", t, t, t);
  else
    snprintf(body, sizeof body,
             "      %%s = stablehlo.add %%x, %%y : tensor<%s>\n", t);
  mt_all_reduce_src(src, sizeof src, n, t, E, body, groups);
  char *in = (char *)malloc(es * (size_t)E * (size_t)n);
  char *out = (char *)malloc(es * (size_t)E * (size_t)n);
  assert_true(in && out);
  for (int p = 0; p < n; p++)
    for (int i = 0; i < E; i++) {
      int v = (i * 7 + p * 13) % 101 - 50;
      char *at = in + ((size_t)p * (size_t)E + (size_t)i) * es;
      if (dt == XRT_F64) *(double *)(void *)at = v;
      else if (dt == XRT_F32) *(float *)(void *)at = (float)v;
      else *(int32_t *)(void *)at = v;
    }
  xrt_shape sh = TU_SHAPE(dt, E);
  mt_compare_on(g, src, &sh, in, es * (size_t)E, out, es * (size_t)E, n);
  for (int i = 0; i < E; i++) {
    long want = max ? -1000 : 0;
    for (int q = 0; q < n; q++) {
      long v = (i * 7 + q * 13) % 101 - 50;
      want = max ? (v > want ? v : want) : want + v;
    }
    for (int p = 0; p < n; p++) {
      const char *at = out + ((size_t)p * (size_t)E + (size_t)i) * es;
      double got = dt == XRT_F64 ? *(const double *)(const void *)at
                   : dt == XRT_F32 ? *(const float *)(const void *)at
                                   : *(const int32_t *)(const void *)at;
      if (got != (double)want)
        fail_msg("element %d of participant %d: %g, not %ld", i, p, got,
                 want);
    }
  }
  free(in);
  free(out);
}

/* The simulator pipelines an all_reduce across processes in 512 KiB
 * chunks dealt round-robin to its chunk threads: several chunks with a
 * partial last one, and a different number of chunk threads in each
 * process (XRT_SIM_XP_THREADS, read when a client is created: 1 or 2,
 * with MT_D members here), which must still meet chunk by chunk. */
static void test_all_reduce_chunked(void **state) {
  (void)state;
  char threads[16];
  snprintf(threads, sizeof threads, "%d", mt.me % 2 + 1);
  setenv("XRT_SIM_XP_THREADS", threads, 1);
  xrt_client_options co = tm_client_options(MT_D, (uint64_t)256 << 20);
  xrt_client *g = NULL;
  xrt_status s = xrt_client_create(&co, &g);
  unsetenv("XRT_SIM_XP_THREADS");
  assert_int_equal(s, XRT_OK);
  check_chunked(g, "f32", XRT_F32, 4, 5 * 131072 + 3, 0);
  check_chunked(g, "f64", XRT_F64, 8, 3 * 65536 + 1001, 0);
  check_chunked(g, "i32", XRT_S32, 4, 2 * 131072 + 77, 1);
  check_chunked(mt.g, "f32", XRT_F32, 4, 131072 + 5, 0);
  xrt_client_release(g);
}

/* ---- failures ---- */

/* ---- the other collectives (operands fetched from other processes) ---- */

/* A module of n replicas around one collective op line (%a in, %r out). */
static void mt_module(char *src, size_t cap, int n, const char *in_t,
                      const char *out_t, const char *op) {
  snprintf(src, cap,
           "module @m attributes {mhlo.num_replicas = %d : i32} {\n"
           "func.func @main(%%a: tensor<%s>) -> tensor<%s> {\n"
           "  %%r = %s : (tensor<%s>) -> tensor<%s>\n"
           "  return %%r : tensor<%s>\n}\n}\n",
           n, in_t, out_t, op, in_t, out_t, out_t);
}

/* Index of participant p in its group of mt_across (member k is
 * k * MT_D + g): its process. */
static int mt_idx(int p) { return p / MT_D; }

static void test_all_gather_across(void **state) {
  (void)state;
  int n = mt.n * MT_D, N = mt.n;
  char groups[512], op[1024], it[64], ot[64], src[4096];
  mt_groups(groups, sizeof groups, MT_D, N, mt_across);
  snprintf(op, sizeof op, "\"stablehlo.all_gather\"(%%a) {all_gather_dim = 0 "
           ": i64, replica_groups = %s}", groups);
  snprintf(it, sizeof it, "3xi32");
  snprintf(ot, sizeof ot, "%dxi32", 3 * N);
  mt_module(src, sizeof src, n, it, ot, op);
  int32_t in[MT_MAXP][3], out[MT_MAXP][3 * MT_MAXP];
  for (int p = 0; p < n; p++)
    for (int i = 0; i < 3; i++) in[p][i] = p * 10 + i;
  xrt_shape sh = TU_SHAPE(XRT_S32, 3);
  mt_compare(src, &sh, in, sizeof in[0], out, sizeof(int32_t) * 3 * N, n);
  for (int p = 0; p < n; p++) {
    int32_t *o = (int32_t *)((char *)out + (size_t)p * sizeof(int32_t) * 3 * N);
    for (int k = 0; k < N; k++)
      for (int i = 0; i < 3; i++)
        assert_int_equal(o[k * 3 + i], in[k * MT_D + p % MT_D][i]);
  }
}

static void test_reduce_scatter_across(void **state) {
  (void)state;
  int n = mt.n * MT_D, N = mt.n;
  char groups[512], op[1024], it[64], ot[64], src[4096];
  mt_groups(groups, sizeof groups, MT_D, N, mt_across);
  snprintf(op, sizeof op,
           "\"stablehlo.reduce_scatter\"(%%a) ({\n"
           "    ^bb0(%%x: tensor<i32>, %%y: tensor<i32>):\n"
           "      %%s = stablehlo.add %%x, %%y : tensor<i32>\n"
           "      stablehlo.return %%s : tensor<i32>\n"
           "  }) {scatter_dimension = 0 : i64, replica_groups = %s}", groups);
  snprintf(it, sizeof it, "%dxi32", 2 * N);
  snprintf(ot, sizeof ot, "2xi32");
  mt_module(src, sizeof src, n, it, ot, op);
  int32_t in[MT_MAXP][2 * MT_MAXP], out[MT_MAXP][2];
  for (int p = 0; p < n; p++)
    for (int i = 0; i < 2 * N; i++) in[p][i] = (p * 13 + i * 7) % 19 - 6;
  xrt_shape sh = TU_SHAPE(XRT_S32, 2 * N);
  mt_compare(src, &sh, in, sizeof in[0], out, sizeof out[0], n);
  for (int p = 0; p < n; p++)
    for (int i = 0; i < 2; i++) {
      int32_t want = 0;
      for (int k = 0; k < N; k++)
        want += in[k * MT_D + p % MT_D][2 * mt_idx(p) + i];
      assert_int_equal(out[p][i], want);
    }
}

static void test_all_to_all_across(void **state) {
  (void)state;
  int n = mt.n * MT_D, N = mt.n;
  char groups[512], op[1024], it[64], src[4096];
  mt_groups(groups, sizeof groups, MT_D, N, mt_across);
  snprintf(op, sizeof op, "\"stablehlo.all_to_all\"(%%a) {split_dimension = "
           "0 : i64, concat_dimension = 0 : i64, split_count = %d : i64, "
           "replica_groups = %s}", N, groups);
  snprintf(it, sizeof it, "%dx2xi64", N);
  mt_module(src, sizeof src, n, it, it, op);
  /* Participant p's N x 2 block at p * N * 2. */
  int64_t in[MT_MAXP * MT_MAXP * 2], out[MT_MAXP * MT_MAXP * 2];
  size_t row = 2, blk = (size_t)N * 2;
  for (int p = 0; p < n; p++)
    for (int r = 0; r < N; r++)
      for (int i = 0; i < 2; i++)
        in[(size_t)p * blk + (size_t)r * row + (size_t)i] =
            p * 1000 + r * 10 + i;
  xrt_shape sh = TU_SHAPE(XRT_S64, N, 2);
  mt_compare(src, &sh, in, blk * sizeof(int64_t), out, blk * sizeof(int64_t),
             n);
  for (int p = 0; p < n; p++)
    for (int r = 0; r < N; r++) /* row r comes from group member r */
      for (int i = 0; i < 2; i++) {
        size_t src_p = (size_t)(r * MT_D + p % MT_D);
        assert_true(out[(size_t)p * blk + (size_t)r * row + (size_t)i] ==
                    in[src_p * blk + (size_t)mt_idx(p) * row + (size_t)i]);
      }
}

static void test_collective_permute_across(void **state) {
  (void)state;
  int n = mt.n * MT_D;
  char pairs[1024], op[1400], src[4096];
  size_t o = (size_t)snprintf(pairs, sizeof pairs, "dense<[");
  for (int q = 0; q < n; q++) /* to the same device of the next process */
    o += (size_t)snprintf(pairs + o, sizeof pairs - o, "%s[%d, %d]",
                          q ? ", " : "", q, (q + MT_D) % n);
  snprintf(pairs + o, sizeof pairs - o, "]> : tensor<%dx2xi64>", n);
  snprintf(op, sizeof op, "\"stablehlo.collective_permute\"(%%a) "
           "{source_target_pairs = %s}", pairs);
  mt_module(src, sizeof src, n, "3xf64", "3xf64", op);
  double in[MT_MAXP][3], out[MT_MAXP][3];
  for (int p = 0; p < n; p++)
    for (int i = 0; i < 3; i++) in[p][i] = p * 0.5 + i;
  xrt_shape sh = TU_SHAPE(XRT_F64, 3);
  mt_compare(src, &sh, in, sizeof in[0], out, sizeof out[0], n);
  for (int p = 0; p < n; p++)
    for (int i = 0; i < 3; i++)
      assert_true(out[p][i] == in[(p - MT_D + n) % n][i]);
}

static void test_collective_broadcast_across(void **state) {
  (void)state;
  int n = mt.n * MT_D, N = mt.n;
  char groups[512], op[1024], src[4096];
  mt_groups(groups, sizeof groups, MT_D, N, mt_across);
  snprintf(op, sizeof op, "\"stablehlo.collective_broadcast\"(%%a) "
           "{replica_groups = %s}", groups);
  mt_module(src, sizeof src, n, "4xui8", "4xui8", op);
  uint8_t in[MT_MAXP][4], out[MT_MAXP][4];
  for (int p = 0; p < n; p++)
    for (int i = 0; i < 4; i++) in[p][i] = (uint8_t)(p * 16 + i);
  xrt_shape sh = TU_SHAPE(XRT_U8, 4);
  mt_compare(src, &sh, in, sizeof in[0], out, sizeof out[0], n);
  for (int p = 0; p < n; p++) /* the group's first member, on process 0 */
    assert_memory_equal(out[p], in[p % MT_D], 4);
}

/* A participant of another process: refused by name. */
static void test_remote_participant(void **state) {
  (void)state;
  int n = mt.n * MT_D;
  char groups[512], src[4096];
  mt_groups(groups, sizeof groups, 1, n, mt_all);
  mt_all_reduce_src(src, sizeof src, n, "f32", 2, MT_ADD("f32"), groups);
  xrt_executable *exe = NULL;
  assert_int_equal(xrt_compile(mt.g, src, strlen(src), NULL, &exe), XRT_OK);
  int other = ((mt.me + 1) % mt.n) * MT_D; /* on the next process */
  xrt_device *d = xrt_executable_device(exe, other);
  assert_int_equal(xrt_device_is_addressable(d), 0);
  assert_int_equal(xrt_device_process_index(d), (mt.me + 1) % mt.n);
  xrt_shape sh = TU_SHAPE(XRT_F32, 2);
  float x[2] = {1, 2};
  xrt_buffer *a = NULL, *o = NULL;
  xrt_device *mine = xrt_client_device(mt.g, 0);
  assert_int_equal(xrt_buffer_from_host(mt.g, mine, &sh, x, &a), XRT_OK);
  xrt_execute_options eo;
  xrt_execute_options_init(&eo);
  eo.launch_id = 12345;
  eo.replica = other;
  assert_int_equal(xrt_execute(exe, mine, &a, 1, &o, 1, &eo),
                   XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), "of process"));
  /* A NULL list for one of this process's participants. */
  xrt_buffer *const *lists[MT_MAXP] = {0};
  xrt_buffer **olists[MT_MAXP] = {0};
  assert_int_equal(xrt_execute_multi(exe, lists, n, 1, olists, 1, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  xrt_buffer_release(a);
  xrt_executable_release(exe);
}

/* Process 0 runs a launch the others skip: it fails with
 * DEADLINE_EXCEEDED after the timeout instead of hanging.  The launch has
 * an explicit id, so the others' launch counters stay in step. */
static void test_stalled_peer(void **state) {
  (void)state;
  int n = mt.n * MT_D;
  char groups[512], src[4096];
  mt_groups(groups, sizeof groups, 1, n, mt_all);
  mt_all_reduce_src(src, sizeof src, n, "f32", 3, MT_ADD("f32"), groups);
  if (mt.me == 0) {
    xrt_executable *exe = NULL;
    assert_int_equal(xrt_compile(mt.g, src, strlen(src), NULL, &exe), XRT_OK);
    xrt_shape sh = TU_SHAPE(XRT_F32, 3);
    float x[3] = {1, 2, 3};
    xrt_buffer *args[MT_MAXP] = {0}, *outs[MT_MAXP] = {0};
    xrt_buffer *const *lists[MT_MAXP] = {0};
    xrt_buffer **olists[MT_MAXP] = {0};
    for (int p = 0; p < MT_D; p++) {
      assert_int_equal(xrt_buffer_from_host(mt.g,
                                            xrt_executable_device(exe, p),
                                            &sh, x, &args[p]), XRT_OK);
      lists[p] = &args[p];
      olists[p] = &outs[p];
    }
    xrt_execute_options eo;
    xrt_execute_options_init(&eo);
    eo.launch_id = 777;
    assert_int_equal(xrt_mpi_set_timeout(-1), XRT_INVALID_ARGUMENT);
    tm_stall_begin();
    xrt_event *done = NULL;
    assert_int_equal(xrt_execute_multi(exe, lists, n, 1, olists, 1, &eo,
                                       &done), XRT_OK);
    tm_stall_end(xrt_event_await(done), NULL);
    xrt_event_release(done);
    float y[3];
    assert_int_equal(xrt_buffer_to_host(outs[0], y, sizeof y),
                     XRT_DEADLINE_EXCEEDED);
    assert_non_null(strstr(xrt_last_error(), "did not answer within 1500 ms"));
    for (int p = 0; p < MT_D; p++) {
      xrt_buffer_release(args[p]);
      xrt_buffer_release(outs[p]);
    }
    xrt_executable_release(exe);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  test_all_reduce_sum_all(state); /* the system still works */
}

/* ---- main ---- */

/* Bad options fail cleanly (MPI errors are returned, not fatal), and
 * leave MPI usable for the real initialization. */
static void test_bad_init(void **state) {
  (void)state;
  xrt_mpi_options mo;
  xrt_mpi_options_init(&mo);
  mo.timeout_ms = -5;
  assert_int_equal(xrt_mpi_init(&mo), XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), "timeout_ms"));
  xrt_mpi_options_init(&mo);
  MPI_Comm null = MPI_COMM_NULL;
  mo.comm = &null;
  assert_int_equal(xrt_mpi_init(&mo), XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), "MPI_COMM_NULL"));
  xrt_mpi_options_init(&mo);
  mo.topology.process_count = 99; /* every process says so: collective */
  assert_int_equal(xrt_mpi_init(&mo), XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), "but the communicator has"));
  xrt_topology t;
  assert_int_equal(xrt_mpi_topology(&t), XRT_FAILED_PRECONDITION);
  assert_int_equal(xrt_mpi_finalize(), XRT_FAILED_PRECONDITION);
}

static int mt_setup(void **state) {
  (void)state;
  const uint64_t memory = (uint64_t)256 << 20;
  tm_world w = tm_join(MT_D, MT_MAXP, memory);
  mt.me = w.me;
  mt.n = w.np;
  mt.g = w.client;
  xrt_client_options co = tm_client_options(mt.n * MT_D, memory);
  co.topology.process_index = 0;
  co.topology.process_count = 1;
  if (xrt_client_create(&co, &mt.ref)) tm_die("reference client");
  return 0;
}

static int mt_teardown(void **state) {
  xrt_client_release(mt.ref);
  return tm_teardown(state);
}

int main(void) {
  const struct CMUnitTest before[] = {
      cmocka_unit_test(test_bad_init),
  };
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_topology),
      cmocka_unit_test(test_global_devices),
      cmocka_unit_test(test_all_reduce_sum_all),
      cmocka_unit_test(test_all_reduce_max_across),
      cmocka_unit_test(test_all_reduce_max_within),
      cmocka_unit_test(test_all_reduce_body_across),
      cmocka_unit_test(test_all_reduce_tiny),
      cmocka_unit_test(test_all_reduce_large),
      cmocka_unit_test(test_all_reduce_chunked),
      cmocka_unit_test(test_all_gather_across),
      cmocka_unit_test(test_reduce_scatter_across),
      cmocka_unit_test(test_all_to_all_across),
      cmocka_unit_test(test_collective_permute_across),
      cmocka_unit_test(test_collective_broadcast_across),
      cmocka_unit_test(test_remote_participant),
      cmocka_unit_test(test_stalled_peer),
  };
  int failed = cmocka_run_group_tests(before, NULL, NULL);
  failed += cmocka_run_group_tests(tests, mt_setup, mt_teardown);
  return failed ? 1 : 0;
}
