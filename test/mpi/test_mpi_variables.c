/*
 * test_mpi_variables.c - variables whose devices span processes (issue
 * #11), run by `make test-mpi` under mpirun with 2 and 4 processes.
 *
 * Every process makes the same calls (SPMD).  A variable over global
 * devices holds, in each process, only the pieces of its own devices;
 * the tests read those pieces back (an identity program run over the
 * variable returns them as a sharded array whose local shards the test
 * downloads) and compare each one with the box of the source array that
 * a plain loop in the test cuts out.  Reshards move pieces between
 * processes; failures must leave every variable of every process as it
 * was.
 */
#include <inttypes.h>
#include <unistd.h>

#include "mpi_util.h"

#define MV_D 2          /* devices per process */
#define MV_R 8          /* the arrays are MV_R x MV_R f32 */
#define MV_MAXG 32      /* global devices */

static struct {
  int me, n, g;   /* process index, processes, global devices */
  xrt_client *c;  /* joined: MV_D here, n * MV_D in all */
} mv;

/* A format: spec over global device ids. */
typedef struct mv_fmt {
  xrt_sharding_spec spec;
  int ndev;
  xrt_device *dev[MV_MAXG];
} mv_fmt;

static xrt_variable_format mv_vf(const mv_fmt *f) {
  xrt_variable_format vf = {&f->spec, f->dev, f->ndev};
  return vf;
}

/* Dimension dim Chunked in `chunks`, over the global devices gids. */
static mv_fmt mv_chunked(int dim, int chunks, const int *gids) {
  mv_fmt f;
  memset(&f, 0, sizeof f);
  xrt_sharding_spec_init(&f.spec, 2);
  f.spec.dims[dim].kind = XRT_DIM_CHUNKED;
  f.spec.dims[dim].num_chunks = 1;
  f.spec.dims[dim].chunks[0] = chunks;
  f.spec.num_mesh_dims = 1;
  f.spec.mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  f.spec.mesh[0].axis = 0;
  f.ndev = chunks;
  for (int k = 0; k < chunks; k++)
    f.dev[k] = xrt_client_global_device(mv.c, gids[k]);
  return f;
}

/* Dimension 0 Chunked in 2, each chunk replicated twice (mesh: chunk
 * outer, replica inner), over 4 global devices. */
static mv_fmt mv_chunk2_repl2(const int *gids) {
  mv_fmt f = mv_chunked(0, 2, gids);
  f.spec.num_mesh_dims = 2;
  f.spec.mesh[1].kind = XRT_MESH_REPLICATED;
  f.spec.mesh[1].replicas = 2;
  f.ndev = 4;
  for (int k = 0; k < 4; k++) f.dev[k] = xrt_client_global_device(mv.c, gids[k]);
  return f;
}

static int mv_ids_all[MV_MAXG], mv_ids_rev[MV_MAXG];

/* The source array: distinct values, seed apart per variable. */
static void mv_fill(float *a, float seed) {
  for (int i = 0; i < MV_R * MV_R; i++) a[i] = seed + (float)i;
}

/* The box of piece k of format f cut out of src by a plain loop. */
static void mv_expected_piece(const mv_fmt *f, const float *src, int k,
                              float *out, int64_t *rows, int64_t *cols) {
  int64_t r = MV_R, c = MV_R;
  int chunked_dim = f->spec.dims[0].kind == XRT_DIM_CHUNKED ? 0 : 1;
  int64_t chunks = f->spec.dims[chunked_dim].chunks[0];
  int64_t reps = f->ndev / chunks; /* replicas are the inner mesh dim */
  int64_t chunk = k / reps;
  int64_t r0 = 0, c0 = 0;
  if (chunked_dim == 0) { r = MV_R / chunks; r0 = chunk * r; }
  else { c = MV_R / chunks; c0 = chunk * c; }
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) out[i * c + j] = src[(r0 + i) * MV_R + c0 + j];
  *rows = r;
  *cols = c;
}

/* Runs an identity program over v (in format f) and checks every piece
 * this process holds against src; also the format key and devices. */
static void mv_check(xrt_variable *v, const mv_fmt *f, const float *src) {
  xrt_variable_format vf = mv_vf(f);
  xrt_shape logical = TU_SHAPE(XRT_F32, MV_R, MV_R);
  assert_int_equal(xrt_variable_format_key(v),
                   xrt_variable_format_key_of(&logical, &vf));
  assert_int_equal(xrt_variable_num_devices(v), f->ndev);
  for (int k = 0; k < f->ndev; k++)
    assert_ptr_equal(xrt_variable_device(v, k), f->dev[k]);
  float want[MV_R * MV_R], got[MV_R * MV_R];
  int64_t rows, cols;
  mv_expected_piece(f, src, 0, want, &rows, &cols);
  char prog[512];
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: tensor<%" PRId64 "x%" PRId64 "xf32>) -> "
           "tensor<%" PRId64 "x%" PRId64 "xf32> {\n"
           "  func.return %%a : tensor<%" PRId64 "x%" PRId64 "xf32>\n}\n",
           rows, cols, rows, cols, rows, cols);
  int assign[MV_MAXG];
  for (int k = 0; k < f->ndev; k++) assign[k] = xrt_device_global_id(f->dev[k]);
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.num_replicas = f->ndev;
  co.device_assignment = assign;
  xrt_executable *exe = NULL;
  assert_int_equal(xrt_compile(mv.c, prog, strlen(prog), &co, &exe), XRT_OK);
  xrt_execute_options eo;
  xrt_execute_options_init(&eo);
  const xrt_sharding_spec *specs[1] = {&f->spec};
  eo.output_specs = specs;
  xrt_variable_arg arg = {v, NULL};
  xrt_sharded_array *out = NULL;
  int upd = -1;
  xrt_status s = xrt_execute_variables(exe, &arg, 1, &upd, &out, 1, &eo);
  if (s) fprintf(stderr, "process %d: %s\n", mv.me, xrt_last_error());
  assert_int_equal(s, XRT_OK);
  int held = 0;
  for (int k = 0; k < f->ndev; k++) {
    if (xrt_device_is_addressable(f->dev[k]) != 1) continue;
    xrt_buffer *b = xrt_sharded_array_shard(out, k);
    assert_non_null(b);
    assert_ptr_equal(xrt_buffer_device(b), f->dev[k]);
    mv_expected_piece(f, src, k, want, &rows, &cols);
    size_t bytes = (size_t)(rows * cols) * sizeof(float);
    assert_int_equal(xrt_buffer_to_host(b, got, bytes), XRT_OK);
    assert_memory_equal(got, want, bytes);
    held++;
  }
  int expect_held = 0;
  for (int k = 0; k < f->ndev; k++)
    expect_held += xrt_device_process_index(f->dev[k]) == mv.me;
  assert_int_equal(held, expect_held);
  xrt_sharded_array_release(out);
  xrt_executable_release(exe);
  /* The whole array, gathered in every process. */
  float all[MV_R * MV_R];
  memset(all, 0, sizeof all);
  assert_int_equal(xrt_variable_to_host(v, all, sizeof all), XRT_OK);
  assert_memory_equal(all, src, sizeof all);
}

static xrt_variable *mv_create(const char *name, const mv_fmt *f,
                               const float *src) {
  xrt_shape logical = TU_SHAPE(XRT_F32, MV_R, MV_R);
  xrt_variable_format vf = mv_vf(f);
  xrt_variable *v = NULL;
  assert_int_equal(xrt_variable_create(mv.c, name, &logical, src, &vf, &v),
                   XRT_OK);
  return v;
}

static xrt_status mv_reshard1(xrt_variable *v, const mv_fmt *f) {
  xrt_variable_format vf = mv_vf(f);
  return xrt_variables_reshard(&v, &vf, 1, NULL);
}

/* ---- tests ---- */

/* A format's key is the same in every process. */
static void test_create_and_keys(void **state) {
  (void)state;
  float src[MV_R * MV_R];
  mv_fill(src, 1);
  mv_fmt a = mv_chunked(0, mv.g, mv_ids_all);
  xrt_variable *v = mv_create("w", &a, src);
  mv_check(v, &a, src);
  uint64_t key = xrt_variable_format_key(v), all[64];
  MPI_Allgather(&key, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int p = 0; p < mv.n; p++) assert_true(all[p] == key);
  /* Another process's device is reported, not usable. */
  int other = ((mv.me + 1) % mv.n) * MV_D;
  assert_int_equal(xrt_device_process_index(xrt_variable_device(v, other)),
                   (mv.me + 1) % mv.n);
  assert_int_equal(xrt_variable_release(v), XRT_OK);
  /* From a sharded array over global devices, and from a .npy file. */
  mv_fmt b = mv_chunked(1, mv.g, mv_ids_rev);
  xrt_shape logical = TU_SHAPE(XRT_F32, MV_R, MV_R);
  xrt_sharded_array *arr = NULL;
  assert_int_equal(xrt_sharded_array_from_host(mv.c, &logical, src, &b.spec,
                                               b.dev, b.ndev, &arr),
                   XRT_OK);
  assert_int_equal(xrt_variable_from_array("arr", arr, &v), XRT_OK);
  mv_check(v, &b, src);
  assert_int_equal(xrt_variable_release(v), XRT_OK);
}

/* Chunked on dim 0 -> dim 1 -> replicated on some -> permuted across
 * processes -> one process's devices only -> back. */
static void test_reshard_chain(void **state) {
  (void)state;
  float src[MV_R * MV_R];
  mv_fill(src, 100);
  int some[4] = {0, MV_D, 1, MV_D + 1}; /* replicas on processes 0 and 1 */
  int last[MV_D];
  for (int k = 0; k < MV_D; k++) last[k] = (mv.n - 1) * MV_D + k;
  mv_fmt f[6] = {
      mv_chunked(0, mv.g, mv_ids_all), mv_chunked(1, mv.g, mv_ids_all),
      mv_chunk2_repl2(some),           mv_chunked(0, mv.g, mv_ids_rev),
      mv_chunked(1, MV_D, last),       mv_chunked(0, mv.g, mv_ids_all)};
  xrt_variable *v = mv_create("chain", &f[0], src);
  for (int i = 1; i < 6; i++) {
    xrt_status s = mv_reshard1(v, &f[i]);
    if (s) fprintf(stderr, "process %d, step %d: %s\n", mv.me, i,
                   xrt_last_error());
    assert_int_equal(s, XRT_OK);
    mv_check(v, &f[i], src);
  }
  xrt_variable_release(v);
}

/* Two variables in one call, and a call that changes nothing. */
static void test_reshard_several_and_noop(void **state) {
  (void)state;
  float s1[MV_R * MV_R], s2[MV_R * MV_R];
  mv_fill(s1, 1000);
  mv_fill(s2, -500);
  int some[4] = {MV_D, 0, MV_D + 1, 1};
  mv_fmt a = mv_chunked(0, mv.g, mv_ids_all);
  mv_fmt b = mv_chunked(1, mv.g, mv_ids_rev);
  mv_fmt c = mv_chunk2_repl2(some);
  xrt_variable *v[2] = {mv_create("x", &a, s1), mv_create("y", &a, s2)};
  xrt_variable_format vf[2] = {mv_vf(&b), mv_vf(&c)};
  assert_int_equal(xrt_variables_reshard(v, vf, 2, NULL), XRT_OK);
  mv_check(v[0], &b, s1);
  mv_check(v[1], &c, s2);
  uint64_t k0 = xrt_variable_format_key(v[0]);
  xrt_client_stats before, after;
  assert_int_equal(xrt_client_get_stats(mv.c, &before), XRT_OK);
  assert_int_equal(xrt_variables_reshard(v, vf, 2, NULL), XRT_OK); /* no-op */
  assert_int_equal(xrt_client_get_stats(mv.c, &after), XRT_OK);
  assert_int_equal(after.device_allocations, before.device_allocations);
  assert_int_equal(after.device_copies, before.device_copies);
  assert_true(xrt_variable_format_key(v[0]) == k0);
  mv_check(v[0], &b, s1);
  mv_check(v[1], &c, s2);
  xrt_variable_release(v[0]);
  xrt_variable_release(v[1]);
}

/* Pieces that stay on their device in the same place are kept: moving
 * replicas {0, D, 1, D+1} to {0, 1, D, D+1} allocates one new piece in
 * processes 0 and 1 (gids 1 and D), none elsewhere. */
static void test_reshard_keeps(void **state) {
  (void)state;
  float src[MV_R * MV_R];
  mv_fill(src, 40);
  int from[4] = {0, MV_D, 1, MV_D + 1}, to[4] = {0, 1, MV_D, MV_D + 1};
  mv_fmt a = mv_chunk2_repl2(from), b = mv_chunk2_repl2(to);
  xrt_variable *v = mv_create("kept", &a, src);
  xrt_client_stats before, after;
  assert_int_equal(xrt_client_get_stats(mv.c, &before), XRT_OK);
  assert_int_equal(mv_reshard1(v, &b), XRT_OK);
  assert_int_equal(xrt_client_get_stats(mv.c, &after), XRT_OK);
  assert_int_equal(after.device_allocations - before.device_allocations,
                   mv.me < 2 ? 1 : 0);
  mv_check(v, &b, src);
  xrt_variable_release(v);
}

/* a += 1 with donation over every device of every process. */
static void test_execute_donation(void **state) {
  (void)state;
  float src[MV_R * MV_R], plus[MV_R * MV_R];
  mv_fill(src, 7);
  for (int i = 0; i < MV_R * MV_R; i++) plus[i] = src[i] + 1;
  mv_fmt a = mv_chunked(0, mv.g, mv_ids_rev);
  xrt_variable *v = mv_create("acc", &a, src);
  int rows = MV_R / mv.g;
  char prog[512];
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: tensor<%dx%dxf32>) -> tensor<%dx%dxf32> {\n"
           "  %%one = stablehlo.constant dense<1.0> : tensor<%dx%dxf32>\n"
           "  %%0 = stablehlo.add %%a, %%one : tensor<%dx%dxf32>\n"
           "  func.return %%0 : tensor<%dx%dxf32>\n}\n",
           rows, MV_R, rows, MV_R, rows, MV_R, rows, MV_R, rows, MV_R);
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.num_replicas = mv.g;
  co.device_assignment = mv_ids_rev;
  xrt_executable *exe = NULL;
  assert_int_equal(xrt_compile(mv.c, prog, strlen(prog), &co, &exe), XRT_OK);
  xrt_variable_arg arg = {v, NULL};
  int upd = 0;
  xrt_sharded_array *out = NULL;
  uint64_t key = xrt_variable_format_key(v);
  assert_int_equal(xrt_execute_variables(exe, &arg, 1, &upd, &out, 1, NULL),
                   XRT_OK);
  assert_null(out);
  assert_true(xrt_variable_format_key(v) == key);
  mv_check(v, &a, plus);
  /* A kernel fault in one process: every process fails, none updates. */
  if (mv.me == mv.n - 1)
    assert_int_equal(xrt_device_inject_fault_kind(xrt_client_device(mv.c, 0),
                                                  XRT_FAULT_KERNEL, 0),
                     XRT_OK);
  xrt_status s = xrt_execute_variables(exe, &arg, 1, &upd, &out, 1, NULL);
  assert_int_not_equal(s, XRT_OK);
  char want[64];
  snprintf(want, sizeof want, "process %d failed", mv.n - 1);
  assert_non_null(strstr(xrt_last_error(), want));
  mv_check(v, &a, plus);
  xrt_executable_release(exe);
  xrt_variable_release(v);
}

/* Save (process 0 writes), change the values, load them back. */
static void test_save_load(void **state) {
  (void)state;
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char path[128], missing[160];
  snprintf(path, sizeof path, "/tmp/xrt_mpv_%d.npy", pid);
  float src[MV_R * MV_R], other[MV_R * MV_R];
  mv_fill(src, 3);
  mv_fill(other, 55);
  mv_fmt a = mv_chunked(1, mv.g, mv_ids_all);
  xrt_variable *v = mv_create("saved", &a, src);
  assert_int_equal(xrt_variable_save(v, path), XRT_OK);
  if (mv.me == 0) { /* the file holds the array: its data ends the file */
    size_t len = 0;
    char *file = tu_read_file(path, &len);
    assert_non_null(file);
    assert_true(len > sizeof src);
    assert_memory_equal(file + len - sizeof src, src, sizeof src);
    free(file);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* Another variable with other values, same format, loads the file. */
  xrt_variable *w = mv_create("loaded", &a, other);
  mv_check(w, &a, other);
  assert_int_equal(xrt_variable_load(w, path), XRT_OK);
  mv_check(w, &a, src);
  /* One process names a missing file: all fail, nothing changes. */
  mv_fill(other, 9);
  xrt_variable *u = mv_create("kept", &a, other);
  snprintf(missing, sizeof missing, "%s.missing", path);
  xrt_status s = xrt_variable_load(u, mv.me == mv.n - 1 ? missing : path);
  assert_int_equal(s, XRT_NOT_FOUND);
  mv_check(u, &a, other);
  /* create_from_npy in another format. */
  mv_fmt b = mv_chunked(0, mv.g, mv_ids_rev);
  xrt_variable *z = NULL;
  xrt_variable_format vb = mv_vf(&b);
  assert_int_equal(xrt_variable_create_from_npy(mv.c, "z", path, &vb, &z),
                   XRT_OK);
  mv_check(z, &b, src);
  MPI_Barrier(MPI_COMM_WORLD);
  if (mv.me == 0) remove(path);
  xrt_variable_release(v);
  xrt_variable_release(w);
  xrt_variable_release(u);
  xrt_variable_release(z);
}

/* A format invalid in one process only: every process fails, nothing
 * changes. */
static void test_invalid_in_one(void **state) {
  (void)state;
  float s1[MV_R * MV_R], s2[MV_R * MV_R];
  mv_fill(s1, 11);
  mv_fill(s2, 22);
  mv_fmt a = mv_chunked(0, mv.g, mv_ids_all);
  mv_fmt b = mv_chunked(1, mv.g, mv_ids_rev);
  xrt_variable *v[2] = {mv_create("p", &a, s1), mv_create("q", &a, s2)};
  uint64_t k0 = xrt_variable_format_key(v[0]);
  mv_fmt bad = b;
  if (mv.me == mv.n - 1) bad.ndev = MV_D; /* the spec spans g devices */
  xrt_variable_format vf[2] = {mv_vf(&b), mv_vf(&bad)};
  assert_int_equal(xrt_variables_reshard(v, vf, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  char want[64];
  snprintf(want, sizeof want, "process %d failed", mv.n - 1);
  assert_non_null(strstr(xrt_last_error(), want));
  assert_true(xrt_variable_format_key(v[0]) == k0);
  mv_check(v[0], &a, s1);
  mv_check(v[1], &a, s2);
  /* Valid but different formats in different processes: refused too. */
  mv_fmt c = mv_chunked(1, mv.g, mv_ids_all);
  xrt_variable_format vc = mv.me == 0 ? mv_vf(&b) : mv_vf(&c);
  assert_int_equal(xrt_variables_reshard(v, &vc, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), "other arguments"));
  mv_check(v[0], &a, s1);
  xrt_variable_release(v[0]);
  xrt_variable_release(v[1]);
}

/* A device failure in one process, during allocation (step 1) and
 * during the moves (step 2): every process fails, nothing changes, and
 * the same reshard works afterwards. */
static void test_fault_in_one(void **state) {
  (void)state;
  float src[MV_R * MV_R];
  mv_fill(src, 31);
  mv_fmt a = mv_chunked(0, mv.g, mv_ids_all);
  mv_fmt b = mv_chunked(1, mv.g, mv_ids_all);
  xrt_variable *v = mv_create("f", &a, src);
  uint64_t k0 = xrt_variable_format_key(v);
  xrt_fault_kind kinds[2] = {XRT_FAULT_ALLOC, XRT_FAULT_TRANSFER};
  for (int t = 0; t < 2; t++) {
    int victim = t == 0 ? mv.n - 1 : 0;
    if (mv.me == victim)
      assert_int_equal(xrt_device_inject_fault_kind(
                           xrt_client_device(mv.c, 1), kinds[t], 0),
                       XRT_OK);
    xrt_status s = mv_reshard1(v, &b);
    assert_int_not_equal(s, XRT_OK);
    if (t == 0) assert_int_equal(s, XRT_RESOURCE_EXHAUSTED);
    char want[64];
    snprintf(want, sizeof want, "process %d failed", victim);
    assert_non_null(strstr(xrt_last_error(), want));
    int codes[64], mine = (int)s;
    MPI_Allgather(&mine, 1, MPI_INT, codes, 1, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < mv.n; p++) assert_int_equal(codes[p], mine);
    assert_true(xrt_variable_format_key(v) == k0);
    mv_check(v, &a, src);
  }
  assert_int_equal(mv_reshard1(v, &b), XRT_OK);
  mv_check(v, &b, src);
  xrt_variable_release(v);
}

/* A variable of client c chunked by rows over all mv.g devices (f0),
 * and the format chunked by columns (f1). */
typedef struct mv_rows {
  xrt_sharding_spec s0, s1;
  xrt_device *devs[MV_MAXG];
  xrt_variable_format f0, f1;
  xrt_variable *v;
  uint64_t key0; /* v's format key as made */
} mv_rows;

static void mv_rows_make(mv_rows *r, xrt_client *c, const char *name,
                         const float *src) {
  xrt_sharding_spec_init(&r->s0, 2);
  r->s0.dims[0].kind = XRT_DIM_CHUNKED;
  r->s0.dims[0].num_chunks = 1;
  r->s0.dims[0].chunks[0] = mv.g;
  r->s0.num_mesh_dims = 1;
  r->s0.mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  r->s1 = r->s0;
  r->s1.dims[1] = r->s0.dims[0];
  r->s1.dims[0].kind = XRT_DIM_NO_SHARDING;
  for (int k = 0; k < mv.g; k++) r->devs[k] = xrt_client_global_device(c, k);
  r->f0 = (xrt_variable_format){&r->s0, r->devs, mv.g};
  r->f1 = (xrt_variable_format){&r->s1, r->devs, mv.g};
  xrt_shape logical = TU_SHAPE(XRT_F32, MV_R, MV_R);
  r->v = NULL;
  assert_int_equal(xrt_variable_create(c, name, &logical, src, &r->f0, &r->v),
                   XRT_OK);
  r->key0 = xrt_variable_format_key(r->v);
}

/* In a client of its own: process 0 skips a reshard; the others fail
 * with DEADLINE_EXCEEDED after the timeout and keep their variable. */
static void test_stalled_peer(void **state) {
  (void)state;
  xrt_client_options co = tm_client_options(MV_D, 0);
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  float src[MV_R * MV_R];
  mv_fill(src, 5);
  mv_rows r;
  mv_rows_make(&r, c, "stall", src);
  if (mv.me != 0) {
    tm_stall_begin();
    tm_stall_end(xrt_variables_reshard(&r.v, &r.f1, 1, NULL), NULL);
    assert_true(xrt_variable_format_key(r.v) == r.key0);
    assert_ptr_equal(xrt_variable_device(r.v, 0), r.devs[0]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  assert_int_equal(xrt_variable_release(r.v), XRT_OK);
  xrt_client_release(c);
}

/* An allocator that fails every allocation while armed. */
static atomic_int mv_oom;

static void *mv_alloc(void *self, size_t size) {
  (void)self;
  return atomic_load(&mv_oom) ? NULL : malloc(size);
}

static void mv_free(void *self, void *p) {
  (void)self;
  free(p);
}

/* One process out of host memory during a reshard: it still votes, so
 * every process fails at once (no timeout), naming it, and nothing
 * changes; afterwards the reshard works. */
static void test_host_oom_in_one(void **state) {
  (void)state;
  xrt_client_options co = tm_client_options(MV_D, 0);
  co.allocator = (xrt_allocator){NULL, mv_alloc, mv_free};
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  float src[MV_R * MV_R], got[MV_R * MV_R];
  mv_fill(src, 9);
  mv_rows r;
  mv_rows_make(&r, c, "oom", src);
  int victim = mv.n - 1;
  /* A short timeout: a process that did not vote shows as a failure
   * here instead of a long wait. */
  assert_int_equal(xrt_mpi_set_timeout(TM_STALL_MS), XRT_OK);
  if (mv.me == victim) atomic_store(&mv_oom, 1);
  xrt_status s = xrt_variables_reshard(&r.v, &r.f1, 1, NULL);
  atomic_store(&mv_oom, 0);
  assert_int_equal(xrt_mpi_set_timeout(TM_TIMEOUT_MS), XRT_OK);
  assert_int_equal(s, XRT_RESOURCE_EXHAUSTED);
  char want[64];
  snprintf(want, sizeof want, "process %d failed", victim);
  if (mv.me != victim) TU_ASSERT_CONTAINS(xrt_last_error(), want);
  assert_true(xrt_variable_format_key(r.v) == r.key0);
  MPI_Barrier(MPI_COMM_WORLD);
  assert_int_equal(xrt_variables_reshard(&r.v, &r.f1, 1, NULL), XRT_OK);
  memset(got, 0, sizeof got);
  assert_int_equal(xrt_variable_to_host(r.v, got, sizeof got), XRT_OK);
  assert_memory_equal(got, src, sizeof got);
  assert_int_equal(xrt_variable_release(r.v), XRT_OK);
  xrt_client_release(c);
}

/* ---- main ---- */

static int mv_setup(void **state) {
  (void)state;
  tm_world w = tm_join(MV_D, MV_MAXG, (uint64_t)64 << 20);
  mv.me = w.me;
  mv.n = w.np;
  mv.g = mv.n * MV_D;
  mv.c = w.client;
  if (MV_R % mv.g) {
    fprintf(stderr, "%d processes: %d global devices must divide %d\n",
            mv.n, mv.g, MV_R);
    exit(1);
  }
  for (int k = 0; k < mv.g; k++) {
    mv_ids_all[k] = k;
    mv_ids_rev[k] = mv.g - 1 - k;
  }
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_and_keys),
      cmocka_unit_test(test_reshard_chain),
      cmocka_unit_test(test_reshard_several_and_noop),
      cmocka_unit_test(test_reshard_keeps),
      cmocka_unit_test(test_execute_donation),
      cmocka_unit_test(test_save_load),
      cmocka_unit_test(test_invalid_in_one),
      cmocka_unit_test(test_fault_in_one),
      cmocka_unit_test(test_stalled_peer),
      cmocka_unit_test(test_host_oom_in_one),
  };
  return cmocka_run_group_tests(tests, mv_setup, tm_teardown) ? 1 : 0;
}
