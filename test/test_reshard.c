/*
 * test_reshard.c - variables (issue #5): reshard between every pair of
 * formats (spec kinds and device orders) on several shapes and element
 * types, no-op detection through the client's counters, atomicity under
 * injected transfer and allocation faults and under device memory
 * exhaustion, concurrent execute + reshard, .npy save/load, and bad input.
 *
 * Every check is made against the logical array twice: the whole array
 * through xrt_variable_to_host, and each device's piece, read by executing
 * an identity program over the variable with xrt_execute_variables and
 * downloading every shard of its output.  The expected piece comes from
 * this file's own index arithmetic (piece_box: mesh coordinates -> sharded
 * axes -> start of the piece), not from xrt's.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, pthreads */

#include <inttypes.h>
#include <pthread.h>

#include "test_util.h"

#define NDEV 8
#define MAX_FMTS 16

/* ---- formats: a spec over a device list, written by hand ---- */

typedef struct fmt {
  const char *name;
  xrt_sharding_spec spec;
  int ndev;
  int dev[NDEV];
} fmt;

static fmt f_new(const char *name, int rank) {
  fmt f;
  memset(&f, 0, sizeof f);
  f.name = name;
  xrt_sharding_spec_init(&f.spec, rank);
  return f;
}

/* Dimension dim Chunked by the factors (one or two; c1 = 0: one). */
static void f_chunk(fmt *f, int dim, int64_t c0, int64_t c1) {
  xrt_dim_sharding *d = &f->spec.dims[dim];
  d->kind = XRT_DIM_CHUNKED;
  d->num_chunks = c1 ? 2 : 1;
  d->chunks[0] = c0;
  d->chunks[1] = c1;
}

static void f_unstack(fmt *f, int dim, int64_t size) {
  f->spec.dims[dim].kind = XRT_DIM_UNSTACKED;
  f->spec.dims[dim].size = size;
}

static void f_axis(fmt *f, int axis) {
  xrt_mesh_mapping *m = &f->spec.mesh[f->spec.num_mesh_dims++];
  m->kind = XRT_MESH_SHARDED_AXIS;
  m->axis = axis;
}

static void f_repl(fmt *f, int64_t r) {
  xrt_mesh_mapping *m = &f->spec.mesh[f->spec.num_mesh_dims++];
  m->kind = XRT_MESH_REPLICATED;
  m->replicas = r;
}

/* Sizes of the sharded axes, in the order they appear over the
 * dimensions; returns how many. */
static int axis_sizes(const xrt_sharding_spec *s, int64_t *size) {
  int n = 0;
  for (int d = 0; d < s->rank; d++) {
    if (s->dims[d].kind == XRT_DIM_CHUNKED)
      for (int i = 0; i < s->dims[d].num_chunks; i++)
        size[n++] = s->dims[d].chunks[i];
    else if (s->dims[d].kind == XRT_DIM_UNSTACKED)
      size[n++] = s->dims[d].size;
  }
  return n;
}

static int64_t mesh_size(const xrt_sharding_spec *s, int i) {
  int64_t ax[XRT_MAX_MESH_DIMS];
  axis_sizes(s, ax);
  return s->mesh[i].kind == XRT_MESH_REPLICATED ? s->mesh[i].replicas
                                                 : ax[s->mesh[i].axis];
}

/* Sets the device list: ids (NULL: 0, 1, ... in order) for the spec's
 * device count. */
static fmt f_on(fmt f, const int *ids) {
  int64_t n = 1;
  for (int i = 0; i < f.spec.num_mesh_dims; i++) n *= mesh_size(&f.spec, i);
  f.ndev = (int)n;
  for (int k = 0; k < f.ndev; k++) f.dev[k] = ids ? ids[k] : k;
  return f;
}

/* The box device k of f holds: start and extent per logical dimension
 * (extent 1 where Unstacked).  Devices are row-major over the mesh; each
 * sharded mesh dimension gives the index along its axis; a Chunked
 * dimension's factors are digits, the first outermost. */
static void piece_box(const fmt *f, const xrt_shape *l, int64_t k,
                      int64_t *start, int64_t *ext) {
  const xrt_sharding_spec *s = &f->spec;
  int64_t ax[XRT_MAX_MESH_DIMS], idx[XRT_MAX_MESH_DIMS] = {0};
  axis_sizes(s, ax);
  for (int i = s->num_mesh_dims - 1; i >= 0; i--) {
    int64_t n = mesh_size(s, i);
    if (s->mesh[i].kind == XRT_MESH_SHARDED_AXIS) idx[s->mesh[i].axis] = k % n;
    k /= n;
  }
  int a = 0;
  for (int d = 0; d < s->rank; d++) {
    const xrt_dim_sharding *ds = &s->dims[d];
    if (ds->kind == XRT_DIM_NO_SHARDING) {
      start[d] = 0;
      ext[d] = l->dims[d];
    } else if (ds->kind == XRT_DIM_UNSTACKED) {
      start[d] = idx[a++];
      ext[d] = 1;
    } else {
      int64_t chunk = 0, total = 1;
      for (int i = 0; i < ds->num_chunks; i++) {
        chunk = chunk * ds->chunks[i] + idx[a++];
        total *= ds->chunks[i];
      }
      ext[d] = l->dims[d] / total;
      start[d] = chunk * ext[d];
    }
  }
}

/* The piece's shape: the box without its Unstacked dimensions. */
static xrt_shape piece_shape(const fmt *f, const xrt_shape *l) {
  int64_t start[XRT_MAX_RANK], ext[XRT_MAX_RANK];
  piece_box(f, l, 0, start, ext);
  xrt_shape p;
  memset(&p, 0, sizeof p);
  p.dtype = l->dtype;
  for (int d = 0; d < l->rank; d++)
    if (f->spec.dims[d].kind != XRT_DIM_UNSTACKED) p.dims[p.rank++] = ext[d];
  return p;
}

/* Gathers device k's expected piece from the logical array into out. */
static void expected_piece(const fmt *f, const xrt_shape *l, const void *data,
                           int k, void *out) {
  int64_t start[XRT_MAX_RANK], ext[XRT_MAX_RANK], i[XRT_MAX_RANK] = {0};
  piece_box(f, l, k, start, ext);
  size_t es = xrt_dtype_size(l->dtype), o = 0;
  for (;;) {
    int64_t lin = 0;
    for (int d = 0; d < l->rank; d++) lin = lin * l->dims[d] + start[d] + i[d];
    memcpy((char *)out + o * es, (const char *)data + (size_t)lin * es, es);
    o++;
    int d = l->rank - 1;
    while (d >= 0 && ++i[d] == ext[d]) i[d--] = 0;
    if (d < 0) break;
  }
}

/* ---- logical arrays ---- */

/* Element n of the test array of type t (distinct where the type allows). */
static void element(xrt_dtype t, int64_t n, int salt, void *out) {
  switch (t) {
  case XRT_F32: {
    float v = (float)n * 0.25f - 3.0f + (float)salt * 1000.0f;
    memcpy(out, &v, 4);
    break;
  }
  case XRT_F64: {
    double v = (double)n * 0.5 + 0.125 + salt * 1e6;
    memcpy(out, &v, 8);
    break;
  }
  case XRT_S8: *(int8_t *)out = (int8_t)(uint8_t)(n * 7 + 1 + salt * 13); break;
  case XRT_PRED: *(uint8_t *)out = (uint8_t)(((n * 5 + salt) % 3) == 0); break;
  case XRT_BF16: {
    uint16_t b = (uint16_t)(0x3f80 + (n + salt * 37) % 2048); /* finite */
    memcpy(out, &b, 2);
    break;
  }
  default: fail_msg("no test data for dtype %d", (int)t);
  }
}

static void *make_array(const xrt_shape *s, int salt) {
  size_t es = xrt_dtype_size(s->dtype);
  int64_t n = xrt_shape_numel(s);
  char *p = malloc((size_t)n * es);
  assert_non_null(p);
  for (int64_t i = 0; i < n; i++) element(s->dtype, i, salt, p + i * es);
  return p;
}

/* Fails with the first differing element when got != want. */
static void assert_elements(const void *got, const void *want, int64_t n,
                            size_t es, const char *what, const char *fmt_name) {
  if (memcmp(got, want, (size_t)n * es) == 0) return;
  for (int64_t i = 0; i < n; i++)
    if (memcmp((const char *)got + i * es, (const char *)want + i * es, es))
      fail_msg("%s (%s): element %" PRId64 " differs", what, fmt_name, i);
}

/* ---- a client with a cache of identity programs for piece checks ---- */

typedef struct idexe {
  xrt_shape piece;
  int ndev, dev[NDEV];
  xrt_executable *exe;
} idexe;

typedef struct env {
  xrt_client *c;
  xrt_device *d[NDEV];
  xrt_buffer *fence[NDEV]; /* one f32 per device, for settle() */
  uint64_t settles;
  int nexe;
  idexe exes[256];
} env;

static void env_open(env *e, uint64_t memory) {
  memset(e, 0, sizeof *e);
  e->c = tu_client(NDEV, 1, memory);
  xrt_shape one = TU_SHAPE(XRT_F32, 1);
  float zero = 0;
  for (int k = 0; k < NDEV; k++) {
    e->d[k] = xrt_client_device(e->c, k);
    assert_int_equal(
        xrt_buffer_from_host(e->c, e->d[k], &one, &zero, &e->fence[k]), XRT_OK);
  }
}

static void env_close(env *e) {
  for (int k = 0; k < NDEV; k++) xrt_buffer_release(e->fence[k]);
  for (int i = 0; i < e->nexe; i++) xrt_executable_release(e->exes[i].exe);
  xrt_client_release(e->c);
}

/* The xrt_variable_format of f (devs: storage for its device list). */
static xrt_variable_format vf(const env *e, const fmt *f, xrt_device **devs) {
  for (int k = 0; k < f->ndev; k++) devs[k] = e->d[f->dev[k]];
  xrt_variable_format v = {&f->spec, devs, f->ndev};
  return v;
}

static bool same_shape(const xrt_shape *a, const xrt_shape *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

/* An identity program over pieces of shape p on f's devices (cached). */
static xrt_executable *identity_exe(env *e, const fmt *f, const xrt_shape *p) {
  for (int i = 0; i < e->nexe; i++) {
    idexe *x = &e->exes[i];
    if (same_shape(&x->piece, p) && x->ndev == f->ndev &&
        !memcmp(x->dev, f->dev, sizeof(int) * (size_t)f->ndev))
      return x->exe;
  }
  assert_true(e->nexe < (int)TU_COUNT(e->exes));
  char ty[128], text[512];
  xrt_shape_format(p, ty, sizeof ty);
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s) -> %s {\n  func.return %%a : %s\n}\n", ty,
           ty, ty);
  idexe *x = &e->exes[e->nexe++];
  x->piece = *p;
  x->ndev = f->ndev;
  memcpy(x->dev, f->dev, sizeof x->dev);
  x->exe = tu_compile(e->c, text, f->ndev, f->dev);
  return x->exe;
}

/* Checks every device's piece of v against the logical array. */
static void check_pieces(env *e, xrt_variable *v, const xrt_shape *l,
                         const void *data, const fmt *f) {
  xrt_shape p = piece_shape(f, l);
  xrt_executable *exe = identity_exe(e, f, &p);
  xrt_variable_arg arg = {v, NULL};
  xrt_sharded_array *out = NULL;
  xrt_status st = xrt_execute_variables(exe, &arg, 1, NULL, &out, 1, NULL);
  if (st) fail_msg("identity over %s: %s", f->name, xrt_last_error());
  assert_int_equal(xrt_sharded_array_num_shards(out), f->ndev);
  size_t bytes = xrt_shape_bytes(&p);
  char *want = malloc(bytes + 1), *got = malloc(bytes + 1);
  assert_true(want && got);
  for (int k = 0; k < f->ndev; k++) {
    xrt_buffer *b = xrt_sharded_array_shard(out, k);
    xrt_shape bs;
    assert_int_equal(xrt_buffer_shape(b, &bs), XRT_OK);
    assert_true(same_shape(&bs, &p));
    assert_int_equal(xrt_device_id(xrt_buffer_device(b)), f->dev[k]);
    assert_int_equal(xrt_buffer_to_host(b, got, bytes), XRT_OK);
    expected_piece(f, l, data, k, want);
    char what[64];
    snprintf(what, sizeof what, "piece of device %d", k);
    assert_elements(got, want, xrt_shape_numel(&p), xrt_dtype_size(l->dtype),
                    what, f->name);
  }
  free(want);
  free(got);
  xrt_sharded_array_release(out);
}

/* Checks v's format (key, devices, spec) and its whole array; with pieces,
 * every device's piece too. */
static void check_var_ex(env *e, xrt_variable *v, const xrt_shape *l,
                         const void *data, const fmt *f, bool pieces) {
  xrt_device *devs[NDEV];
  xrt_variable_format want = vf(e, f, devs);
  uint64_t key = xrt_variable_format_key_of(l, &want);
  assert_true(key != 0);
  if (xrt_variable_format_key(v) != key)
    fail_msg("variable %s: format key is not that of %s",
             xrt_variable_name(v), f->name);
  assert_int_equal(xrt_variable_num_devices(v), f->ndev);
  for (int k = 0; k < f->ndev; k++)
    assert_ptr_equal(xrt_variable_device(v, k), devs[k]);
  xrt_shape s;
  assert_int_equal(xrt_variable_shape(v, &s), XRT_OK);
  assert_true(same_shape(&s, l));
  xrt_sharding_spec spec;
  assert_int_equal(xrt_variable_spec(v, &spec), XRT_OK);
  xrt_variable_format back = {&spec, devs, f->ndev};
  assert_true(xrt_variable_format_key_of(l, &back) == key);
  size_t bytes = xrt_shape_bytes(l);
  char *host = malloc(bytes);
  assert_non_null(host);
  assert_int_equal(xrt_variable_to_host(v, host, bytes), XRT_OK);
  assert_elements(host, data, xrt_shape_numel(l), xrt_dtype_size(l->dtype),
                  "to_host", f->name);
  free(host);
  if (pieces) check_pieces(e, v, l, data, f);
}

static void check_var(env *e, xrt_variable *v, const xrt_shape *l,
                      const void *data, const fmt *f) {
  check_var_ex(e, v, l, data, f, true);
}

static xrt_variable *make_var(env *e, const char *name, const xrt_shape *l,
                              const void *data, const fmt *f) {
  xrt_device *devs[NDEV];
  xrt_variable_format v = vf(e, f, devs);
  xrt_variable *var = NULL;
  xrt_status st = xrt_variable_create(e->c, name, l, data, &v, &var);
  if (st) fail_msg("create %s in %s: %s", name, f->name, xrt_last_error());
  assert_non_null(var);
  return var;
}

static xrt_status reshard_n(env *e, xrt_variable **vars, const fmt *const *to,
                            int n) {
  xrt_device *devs[4][NDEV];
  xrt_variable_format fs[4];
  assert_true(n <= 4);
  for (int i = 0; i < n; i++) fs[i] = vf(e, to[i], devs[i]);
  return xrt_variables_reshard(vars, fs, n, NULL);
}

static xrt_status reshard1(env *e, xrt_variable *v, const fmt *to) {
  return reshard_n(e, &v, &to, 1);
}

/* A device's worker signals a task done before it drops the task's
 * buffer references, so a buffer released right after an execution may be
 * freed a moment later.  A read on every device runs after any such task
 * has finished (the queue is in order, and inline work waits for an idle
 * device), so the counters read after it are exact. */
static void settle(env *e) {
  for (int k = 0; k < NDEV; k++) {
    float x;
    assert_int_equal(xrt_buffer_to_host(e->fence[k], &x, sizeof x), XRT_OK);
  }
  e->settles++;
}

/* The client's counters once settled, without the fence buffers and the
 * settling reads. */
static xrt_client_stats stats(env *e) {
  settle(e);
  xrt_client_stats s;
  memset(&s, 0xab, sizeof s);
  assert_int_equal(xrt_client_get_stats(e->c, &s), XRT_OK);
  s.device_bytes_in_use -= NDEV * sizeof(float);
  s.device_to_host -= e->settles * NDEV;
  return s;
}

static void assert_stats_equal(const xrt_client_stats *a,
                               const xrt_client_stats *b) {
  assert_int_equal(a->device_allocations, b->device_allocations);
  assert_int_equal(a->device_frees, b->device_frees);
  assert_int_equal(a->device_bytes_in_use, b->device_bytes_in_use);
  assert_int_equal(a->device_copies, b->device_copies);
  assert_int_equal(a->device_bytes_copied, b->device_bytes_copied);
  assert_int_equal(a->host_to_device, b->host_to_device);
  assert_int_equal(a->device_to_host, b->device_to_host);
  assert_int_equal(a->executions, b->executions);
}

/* ---- the formats of each test shape ---- */

static const int reversed[NDEV] = {7, 6, 5, 4, 3, 2, 1, 0};
static const int shuffled[NDEV] = {3, 1, 7, 5, 0, 2, 4, 6};
static const int upper4[4] = {4, 5, 6, 7};
static const int pair61[2] = {6, 1};
static const int dev5[1] = {5};

/* [8, 16]: every spec kind of #4, device-order permutations, subsets. */
static int formats_2d(fmt *out) {
  int n = 0;
  fmt f;
  out[n++] = f_on(f_new("none@0", 2), NULL);
  out[n++] = f_on(f_new("none@5", 2), dev5);
  f = f_new("d0[8]", 2), f_chunk(&f, 0, 8, 0), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  f.name = "d0[8]@reversed", out[n++] = f_on(f, reversed);
  f = f_new("d1[8]", 2), f_chunk(&f, 1, 8, 0), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  /* Two factors, mesh in the other order: device k = 2*inner + outer. */
  f = f_new("d0[4,2]/mesh(a1,a0)", 2), f_chunk(&f, 0, 4, 2);
  f_axis(&f, 1), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  f = f_new("d0[2]xd1[4]", 2), f_chunk(&f, 0, 2, 0), f_chunk(&f, 1, 4, 0);
  f_axis(&f, 0), f_axis(&f, 1);
  out[n++] = f_on(f, NULL);
  f.name = "d0[2]xd1[4]@shuffled", out[n++] = f_on(f, shuffled);
  f = f_new("repl8", 2), f_repl(&f, 8);
  out[n++] = f_on(f, NULL);
  f = f_new("d0[4]+repl2", 2), f_chunk(&f, 0, 4, 0), f_axis(&f, 0), f_repl(&f, 2);
  out[n++] = f_on(f, NULL);
  f = f_new("repl2+d1[4]", 2), f_chunk(&f, 1, 4, 0), f_repl(&f, 2), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  f = f_new("unstack0", 2), f_unstack(&f, 0, 8), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  f = f_new("d1[4]@4..7", 2), f_chunk(&f, 1, 4, 0), f_axis(&f, 0);
  out[n++] = f_on(f, upper4);
  f = f_new("repl2@{6,1}", 2), f_repl(&f, 2);
  out[n++] = f_on(f, pair61);
  return n;
}

/* [16, 8, 4] */
static int formats_3d(fmt *out) {
  int n = 0;
  fmt f;
  out[n++] = f_on(f_new("none@0", 3), NULL);
  f = f_new("d0[8]", 3), f_chunk(&f, 0, 8, 0), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  f.name = "d0[8]@shuffled", out[n++] = f_on(f, shuffled);
  f = f_new("d2[4]", 3), f_chunk(&f, 2, 4, 0), f_axis(&f, 0);
  out[n++] = f_on(f, upper4);
  f = f_new("d1[2,4]", 3), f_chunk(&f, 1, 2, 4), f_axis(&f, 0), f_axis(&f, 1);
  out[n++] = f_on(f, NULL);
  f = f_new("d0[2]xd2[4]/mesh(a1,a0)", 3), f_chunk(&f, 0, 2, 0);
  f_chunk(&f, 2, 4, 0), f_axis(&f, 1), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  f = f_new("repl8", 3), f_repl(&f, 8);
  out[n++] = f_on(f, reversed);
  f = f_new("d2[4]+repl2", 3), f_chunk(&f, 2, 4, 0), f_axis(&f, 0), f_repl(&f, 2);
  out[n++] = f_on(f, NULL);
  f = f_new("unstack1", 3), f_unstack(&f, 1, 8), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  f = f_new("unstack1@reversed", 3), f_unstack(&f, 1, 8), f_axis(&f, 0);
  out[n++] = f_on(f, reversed);
  f = f_new("unstack2xd0[2]", 3), f_chunk(&f, 0, 2, 0), f_unstack(&f, 2, 4);
  f_axis(&f, 1), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  return n;
}

/* [32] */
static int formats_1d(fmt *out) {
  int n = 0;
  fmt f;
  out[n++] = f_on(f_new("none@5", 1), dev5);
  f = f_new("d0[8]", 1), f_chunk(&f, 0, 8, 0), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  f.name = "d0[8]@reversed", out[n++] = f_on(f, reversed);
  f = f_new("d0[4,2]/mesh(a1,a0)", 1), f_chunk(&f, 0, 4, 2);
  f_axis(&f, 1), f_axis(&f, 0);
  out[n++] = f_on(f, NULL);
  f = f_new("d0[4]+repl2", 1), f_chunk(&f, 0, 4, 0), f_axis(&f, 0), f_repl(&f, 2);
  out[n++] = f_on(f, NULL);
  f = f_new("repl2+d0[4]", 1), f_chunk(&f, 0, 4, 0), f_repl(&f, 2), f_axis(&f, 0);
  out[n++] = f_on(f, shuffled);
  f = f_new("repl8", 1), f_repl(&f, 8);
  out[n++] = f_on(f, NULL);
  f = f_new("d0[2]@{6,1}", 1), f_chunk(&f, 0, 2, 0), f_axis(&f, 0);
  out[n++] = f_on(f, pair61);
  return n;
}

/* ---- every pair of formats ---- */

/* For every ordered pair (a, b) of the shape's formats, including a == b:
 * a variable created in a, resharded to b, matches the logical array. */
static void all_pairs(xrt_shape l, int (*formats)(fmt *)) {
  static const xrt_dtype types[] = {XRT_F32, XRT_S8, XRT_F64, XRT_PRED,
                                    XRT_BF16};
  env e;
  env_open(&e, 0);
  fmt f[MAX_FMTS];
  int n = formats(f);
  /* Distinct layouts have distinct keys; each format is valid. */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      xrt_device *da[NDEV], *db[NDEV];
      xrt_variable_format a = vf(&e, &f[i], da), b = vf(&e, &f[j], db);
      uint64_t ka = xrt_variable_format_key_of(&l, &a);
      uint64_t kb = xrt_variable_format_key_of(&l, &b);
      if (!ka) fail_msg("format %s has no key", f[i].name);
      if ((ka == kb) != (i == j))
        fail_msg("formats %s and %s: keys equal %d", f[i].name, f[j].name,
                 ka == kb);
    }
  /* light (valgrind, wine): one wide and one narrow element */
  size_t ntypes = tu_light() ? 2 : TU_COUNT(types);
  for (size_t t = 0; t < ntypes; t++) {
    l.dtype = types[t];
    void *data = make_array(&l, (int)t);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        xrt_variable *v = make_var(&e, "w", &l, data, &f[i]);
        xrt_status st = reshard1(&e, v, &f[j]);
        if (st)
          fail_msg("%s: %s -> %s: %s", xrt_dtype_name(l.dtype), f[i].name,
                   f[j].name, xrt_last_error());
        check_var(&e, v, &l, data, &f[j]);
        assert_int_equal(xrt_variable_release(v), XRT_OK);
      }
    free(data);
  }
  /* Every device piece was freed with its variable. */
  assert_int_equal(stats(&e).device_bytes_in_use, 0);
  env_close(&e);
}

static void test_pairs_2d(void **state) {
  (void)state;
  all_pairs(TU_SHAPE(XRT_F32, 8, 16), formats_2d);
}

static void test_pairs_3d(void **state) {
  (void)state;
  all_pairs(TU_SHAPE(XRT_F32, 16, 8, 4), formats_3d);
}

static void test_pairs_1d(void **state) {
  (void)state;
  all_pairs(TU_SHAPE(XRT_F32, 32), formats_1d);
}

/* A chain of reshards of one variable through every format (each reached
 * from the previous one, not from a fresh upload), and via_host. */
static void test_chain_and_via_host(void **state) {
  (void)state;
  env e;
  env_open(&e, 0);
  fmt f[MAX_FMTS];
  int n = formats_2d(f);
  xrt_shape l = TU_SHAPE(XRT_F32, 8, 16);
  void *data = make_array(&l, 3);
  xrt_variable *v = make_var(&e, "chain", &l, data, &f[0]);
  xrt_reshard_options o;
  xrt_reshard_options_init(&o);
  assert_false(o.via_host);
  for (int round = 0; round < 2; round++) {
    o.via_host = round == 1;
    for (int i = 1; i <= n; i++) {
      const fmt *to = &f[(i * 5) % n]; /* 5 is prime to n: every format */
      xrt_device *devs[NDEV];
      xrt_variable_format vfmt = vf(&e, to, devs);
      xrt_client_stats s0 = stats(&e);
      assert_int_equal(xrt_variables_reshard(&v, &vfmt, 1, &o), XRT_OK);
      xrt_client_stats s1 = stats(&e);
      check_var(&e, v, &l, data, to);
      /* Device to device unless asked: no host transfer. */
      if (!o.via_host) {
        assert_int_equal(s1.host_to_device, s0.host_to_device);
        assert_int_equal(s1.device_to_host, s0.device_to_host);
      }
    }
  }
  xrt_variable_release(v);
  free(data);
  env_close(&e);
}

/* ---- no-op detection and pieces kept in place ---- */

static void test_noop(void **state) {
  (void)state;
  env e;
  env_open(&e, 0);
  fmt f[MAX_FMTS];
  formats_2d(f);
  const fmt *d0 = &f[2], *repl = &f[8], *d1 = &f[4];
  xrt_shape l = TU_SHAPE(XRT_F32, 8, 16);
  void *a = make_array(&l, 1), *b = make_array(&l, 2), *c = make_array(&l, 3);
  xrt_variable *va = make_var(&e, "a", &l, a, d0);
  xrt_variable *vb = make_var(&e, "b", &l, b, repl);
  xrt_variable *vc = make_var(&e, "c", &l, c, d1);
  xrt_variable *va2 = make_var(&e, "a2", &l, a, d0);

  /* To the current format, with a copy of the spec and of the device list:
   * no counter moves. */
  fmt copy = *d0;
  xrt_client_stats s0 = stats(&e);
  assert_int_equal(reshard1(&e, va, &copy), XRT_OK);
  xrt_variable *all[3] = {va, vb, vc};
  const fmt *same[3] = {d0, repl, d1};
  assert_int_equal(reshard_n(&e, all, same, 3), XRT_OK);
  xrt_client_stats s1 = stats(&e);
  assert_stats_equal(&s0, &s1);
  check_var(&e, va, &l, a, d0);

  /* Some change, some do not: the call costs what the changing one costs
   * alone (measured on a twin of it). */
  const fmt *mixed[3] = {repl, repl, d1};
  s0 = stats(&e);
  assert_int_equal(reshard_n(&e, all, mixed, 3), XRT_OK);
  s1 = stats(&e);
  assert_int_equal(reshard1(&e, va2, repl), XRT_OK);
  xrt_client_stats s2 = stats(&e);
  assert_true(s1.device_allocations > s0.device_allocations);
  assert_int_equal(s1.device_allocations - s0.device_allocations,
                   s2.device_allocations - s1.device_allocations);
  assert_int_equal(s1.device_frees - s0.device_frees,
                   s2.device_frees - s1.device_frees);
  assert_int_equal(s1.device_copies - s0.device_copies,
                   s2.device_copies - s1.device_copies);
  assert_int_equal(s1.device_bytes_copied - s0.device_bytes_copied,
                   s2.device_bytes_copied - s1.device_bytes_copied);
  assert_int_equal(s1.host_to_device, s0.host_to_device);
  assert_int_equal(s1.device_to_host, s0.device_to_host);
  /* Chunked over 8 -> replicated on 8: each device lacks 7 of the 8
   * pieces (7/8 of the array); at most every new piece is written. */
  uint64_t total = xrt_shape_bytes(&l);
  uint64_t copied = s1.device_bytes_copied - s0.device_bytes_copied;
  assert_true(copied >= 8 * total * 7 / 8);
  assert_true(copied <= 8 * total);
  /* Memory: the old pieces (one array) freed, eight copies held. */
  assert_int_equal(s1.device_bytes_in_use - s0.device_bytes_in_use, 7 * total);
  check_var(&e, va, &l, a, repl);
  check_var(&e, vb, &l, b, repl);
  check_var(&e, vc, &l, c, d1);
  check_var(&e, va2, &l, a, repl);

  /* The no-op costs nothing however large the variable: timing-free
   * check by counters on a 1 MiB one. */
  xrt_shape big = TU_SHAPE(XRT_F32, 512, 512);
  void *bd = make_array(&big, 4);
  xrt_variable *vbig = make_var(&e, "big", &big, bd, d0);
  s0 = stats(&e);
  for (int i = 0; i < 100; i++) assert_int_equal(reshard1(&e, vbig, d0), XRT_OK);
  s1 = stats(&e);
  assert_stats_equal(&s0, &s1);
  check_var(&e, vbig, &big, bd, d0);

  xrt_variable_release(vbig);
  xrt_variable_release(va);
  xrt_variable_release(vb);
  xrt_variable_release(vc);
  xrt_variable_release(va2);
  free(a), free(b), free(c), free(bd);
  env_close(&e);
}

/* Pieces that stay on their device in the same place are kept: dropping
 * the replicas of repl2+d1[4] keeps devices 0..3's pieces (no allocation,
 * no copy); adding them back copies exactly the four new pieces. */
static void test_pieces_kept(void **state) {
  (void)state;
  env e;
  env_open(&e, 0);
  xrt_shape l = TU_SHAPE(XRT_F32, 8, 16);
  fmt wide = f_new("repl2+d1[4]", 2), narrow = f_new("d1[4]", 2);
  f_chunk(&wide, 1, 4, 0), f_repl(&wide, 2), f_axis(&wide, 0);
  f_chunk(&narrow, 1, 4, 0), f_axis(&narrow, 0);
  wide = f_on(wide, NULL), narrow = f_on(narrow, NULL);
  void *data = make_array(&l, 5);
  xrt_variable *v = make_var(&e, "kept", &l, data, &wide);
  uint64_t piece = xrt_shape_bytes(&l) / 4;
  xrt_client_stats s0 = stats(&e);
  assert_int_equal(reshard1(&e, v, &narrow), XRT_OK);
  xrt_client_stats s1 = stats(&e);
  assert_int_equal(s1.device_allocations, s0.device_allocations);
  assert_int_equal(s1.device_bytes_copied, s0.device_bytes_copied);
  assert_int_equal(s0.device_bytes_in_use - s1.device_bytes_in_use, 4 * piece);
  check_var(&e, v, &l, data, &narrow);
  s0 = stats(&e);
  assert_int_equal(reshard1(&e, v, &wide), XRT_OK);
  s1 = stats(&e);
  assert_int_equal(s1.device_bytes_copied - s0.device_bytes_copied, 4 * piece);
  assert_int_equal(s1.device_bytes_in_use - s0.device_bytes_in_use, 4 * piece);
  assert_int_equal(s1.host_to_device, s0.host_to_device);
  check_var(&e, v, &l, data, &wide);
  xrt_variable_release(v);
  free(data);
  env_close(&e);
}

/* ---- atomicity ---- */

/* Three variables of different shapes and types, and where they go. */
typedef struct trio {
  xrt_shape l[3];
  void *data[3];
  fmt from[3], to[3];
  xrt_variable *v[3];
} trio;

static void trio_init(trio *t) {
  memset(t, 0, sizeof *t);
  t->l[0] = TU_SHAPE(XRT_F32, 8, 16);
  t->l[1] = TU_SHAPE(XRT_S8, 16, 8, 4);
  t->l[2] = TU_SHAPE(XRT_F64, 32);
  fmt f;
  f = f_new("d0[8]", 2), f_chunk(&f, 0, 8, 0), f_axis(&f, 0);
  t->from[0] = f_on(f, NULL);
  f = f_new("repl8", 2), f_repl(&f, 8);
  t->to[0] = f_on(f, NULL);
  f = f_new("d2[4]+repl2", 3), f_chunk(&f, 2, 4, 0), f_axis(&f, 0), f_repl(&f, 2);
  t->from[1] = f_on(f, NULL);
  f = f_new("d0[2]xd2[4]/mesh(a1,a0)@shuffled", 3), f_chunk(&f, 0, 2, 0);
  f_chunk(&f, 2, 4, 0), f_axis(&f, 1), f_axis(&f, 0);
  t->to[1] = f_on(f, shuffled);
  t->from[2] = f_on(f_new("none@5", 1), dev5);
  f = f_new("d0[8]@reversed", 1), f_chunk(&f, 0, 8, 0), f_axis(&f, 0);
  t->to[2] = f_on(f, reversed);
  for (int i = 0; i < 3; i++) t->data[i] = make_array(&t->l[i], 7 + i);
}

static void trio_create(env *e, trio *t) {
  static const char *names[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; i++)
    t->v[i] = make_var(e, names[i], &t->l[i], t->data[i], &t->from[i]);
}

static xrt_status trio_reshard(env *e, trio *t) {
  const fmt *to[3] = {&t->to[0], &t->to[1], &t->to[2]};
  return reshard_n(e, t->v, to, 3);
}

/* Checks all three in from (before == false) or to. */
static void trio_check(env *e, trio *t, bool moved) {
  for (int i = 0; i < 3; i++)
    check_var(e, t->v[i], &t->l[i], t->data[i], moved ? &t->to[i] : &t->from[i]);
}

static void trio_release(trio *t) {
  for (int i = 0; i < 3; i++) {
    assert_int_equal(xrt_variable_release(t->v[i]), XRT_OK);
    t->v[i] = NULL;
  }
}

static void trio_free(trio *t) {
  for (int i = 0; i < 3; i++) free(t->data[i]);
}

/* Operations of the counted kind a clean reshard of the trio performs
 * over all devices (so at least those of any one device); staged: with an
 * allocation fault on device 0 first, which sends the reshard through
 * host memory. */
static int64_t count_ops(env *e, trio *t, xrt_fault_kind kind, bool staged) {
  trio_create(e, t);
  if (staged)
    assert_int_equal(xrt_device_inject_fault_kind(e->d[0], XRT_FAULT_ALLOC, 0),
                     XRT_OK);
  xrt_client_stats a = stats(e);
  assert_int_equal(trio_reshard(e, t), XRT_OK);
  xrt_client_stats b = stats(e);
  assert_int_equal(xrt_device_inject_fault_kind(e->d[0], XRT_FAULT_ALLOC, -1),
                   XRT_OK);
  trio_check(e, t, true);
  trio_release(t);
  if (kind == XRT_FAULT_ALLOC)
    return (int64_t)(b.device_allocations - a.device_allocations);
  return (int64_t)(b.device_copies - a.device_copies + b.host_to_device -
                   a.host_to_device + b.device_to_host - a.device_to_host);
}

/* Injects a fault of kind into the (n+1)-th operation of that kind on
 * device dev, for every n up to past the last one the reshard performs,
 * on fresh variables each time (staged: plus an allocation fault on device
 * 0, which sends the reshard through host memory, so the fault hits the
 * staged path and its rebuild of the old pieces).  Each reshard either
 * succeeds with every variable moved and right, or fails with every
 * variable exactly as before (format and data) and no device memory held.
 * Returns how many failed. */
static int fault_sweep(env *e, trio *t, int dev, xrt_fault_kind kind,
                       bool staged) {
  int64_t ops = count_ops(e, t, kind, staged);
  assert_true(ops > 0);
  int failures = 0;
  for (int64_t n = 0; n <= ops + 1; n++) {
    trio_create(e, t);
    uint64_t in_use = stats(e).device_bytes_in_use;
    if (staged)
      assert_int_equal(
          xrt_device_inject_fault_kind(e->d[0], XRT_FAULT_ALLOC, 0), XRT_OK);
    assert_int_equal(xrt_device_inject_fault_kind(e->d[dev], kind, n), XRT_OK);
    xrt_status st = trio_reshard(e, t);
    /* Cancels the faults the reshard did not reach. */
    assert_int_equal(xrt_device_inject_fault_kind(e->d[dev], kind, -1), XRT_OK);
    assert_int_equal(xrt_device_inject_fault_kind(e->d[0], XRT_FAULT_ALLOC, -1),
                     XRT_OK);
    if (st != XRT_OK) {
      failures++;
      if (st == XRT_DATA_LOSS ||
          (kind == XRT_FAULT_ALLOC && st != XRT_RESOURCE_EXHAUSTED))
        fail_msg("fault %d of kind %d on device %d: %s (%s)", (int)n,
                 (int)kind, dev, xrt_strerror(st), xrt_last_error());
      assert_true(strlen(xrt_last_error()) > 0);
      assert_int_equal(stats(e).device_bytes_in_use, in_use);
      trio_check(e, t, false);
    } else {
      trio_check(e, t, true);
    }
    trio_release(t);
  }
  return failures;
}

/* Sweeps faults of kind over each of the n devices devs, plain then
 * staged, on one trio: failed[i][staged] counts the failed reshards.
 * Afterwards nothing is left allocated on the devices. */
static void sweep_devices(xrt_fault_kind kind, const int *devs, int n,
                          int (*failed)[2]) {
  env e;
  env_open(&e, 0);
  trio t;
  trio_init(&t);
  for (int i = 0; i < n; i++)
    for (int staged = 0; staged < 2; staged++)
      failed[i][staged] = fault_sweep(&e, &t, devs[i], kind, staged);
  assert_int_equal(stats(&e).device_bytes_in_use, 0);
  trio_free(&t);
  env_close(&e);
}

static void test_atomic_transfer_faults(void **state) {
  (void)state;
  static const int devs[] = {0, 7, 3, 5};
  int failed[TU_COUNT(devs)][2];
  /* light: the first and the last device */
  int n = tu_light() ? 2 : (int)TU_COUNT(devs);
  sweep_devices(XRT_FAULT_TRANSFER, devs, n, failed);
  for (int i = 0; i < n; i++) {
    /* Every device sends or receives in this reshard: some fault hits. */
    if (failed[i][0] < 1) fail_msg("device %d: no transfer fault hit", devs[i]);
    if (failed[i][1] < 1)
      fail_msg("device %d: no transfer fault hit (staged)", devs[i]);
  }
}

/* An allocation fault may be survived (the reshard then goes through host
 * memory) or reported as RESOURCE_EXHAUSTED: both are checked at every
 * allocation; with the staged path forced, a second allocation fault
 * (while the old pieces are already freed) does fail the call, which must
 * then rebuild them. */
static void test_atomic_alloc_faults(void **state) {
  (void)state;
  static const int devs[] = {0, 2, 6};
  int failed[TU_COUNT(devs)][2];
  sweep_devices(XRT_FAULT_ALLOC, devs, TU_COUNT(devs), failed);
  for (size_t i = 0; i < TU_COUNT(devs); i++) {
    /* (On device 0 the sweep's fault replaces the one forcing staging.) */
    if (devs[i] != 0 && failed[i][1] < 1)
      fail_msg("device %d: no staged allocation failed", devs[i]);
  }
}

/* An invalid format in the last place: nothing moves. */
static void test_atomic_invalid_last(void **state) {
  (void)state;
  env e;
  env_open(&e, 0);
  trio t;
  trio_init(&t);
  trio_create(&e, &t);
  fmt bad = f_new("d0[3]", 1);
  f_chunk(&bad, 0, 3, 0), f_axis(&bad, 0);
  bad = f_on(bad, NULL); /* 3 does not divide 32 */
  const fmt *to[3] = {&t.to[0], &t.to[1], &bad};
  uint64_t in_use = stats(&e).device_bytes_in_use;
  assert_int_equal(reshard_n(&e, t.v, to, 3), XRT_INVALID_ARGUMENT);
  assert_int_equal(stats(&e).device_bytes_in_use, in_use);
  trio_check(&e, &t, false);
  /* The same with the good three goes through. */
  assert_int_equal(trio_reshard(&e, &t), XRT_OK);
  trio_check(&e, &t, true);
  trio_release(&t);
  trio_free(&t);
  env_close(&e);
}

/* Device memory exhaustion: with per-device memory from too little for
 * the new pieces to plenty, the reshard either succeeds with the right
 * data or fails RESOURCE_EXHAUSTED with everything intact.  Per device
 * (bytes): x 2048 -> 16384, y 8192 -> 1024, z 512 -> 512, so before 10.5
 * KiB, after 17.5 KiB, both at once 28 KiB. */
static void test_atomic_memory(void **state) {
  (void)state;
  xrt_shape l[3] = {TU_SHAPE(XRT_F32, 64, 64), TU_SHAPE(XRT_F32, 32, 64),
                    TU_SHAPE(XRT_F32, 16, 64)};
  fmt d0 = f_new("d0[8]", 2), d1 = f_new("d1[8]", 2), repl = f_new("repl8", 2);
  f_chunk(&d0, 0, 8, 0), f_axis(&d0, 0), d0 = f_on(d0, NULL);
  f_chunk(&d1, 1, 8, 0), f_axis(&d1, 0), d1 = f_on(d1, NULL);
  f_repl(&repl, 8), repl = f_on(repl, NULL);
  const fmt *from[3] = {&d0, &repl, &d0}, *to[3] = {&repl, &d1, &d1};
  void *data[3];
  for (int i = 0; i < 3; i++) data[i] = make_array(&l[i], i);
  int ok = 0, exhausted = 0;
  /* 10 KiB .. 32 KiB (light: every other), then 1 MiB */
  for (int step = 0; step <= 23; step += tu_light() && step < 22 ? 2 : 1) {
    uint64_t mem = step < 23 ? (uint64_t)(10 + step) * 1024 : 1 << 20;
    env e;
    env_open(&e, mem);
    xrt_variable *v[3] = {0};
    bool created = true;
    for (int i = 0; i < 3 && created; i++) {
      xrt_device *devs[NDEV];
      xrt_variable_format f = vf(&e, from[i], devs);
      xrt_status st = xrt_variable_create(e.c, "m", &l[i], data[i], &f, &v[i]);
      if (st) {
        assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
        created = false;
      }
    }
    if (created) {
      xrt_status st = reshard_n(&e, v, to, 3);
      if (st == XRT_OK) {
        ok++;
        /* (No piece check: the identity program's outputs would need
         * memory this client does not have.) */
        for (int i = 0; i < 3; i++)
          check_var_ex(&e, v[i], &l[i], data[i], to[i], mem > 64 * 1024);
      } else {
        if (st != XRT_RESOURCE_EXHAUSTED)
          fail_msg("memory %" PRIu64 ": %s (%s)", mem, xrt_strerror(st),
                   xrt_last_error());
        exhausted++;
        for (int i = 0; i < 3; i++)
          check_var_ex(&e, v[i], &l[i], data[i], from[i], false);
        /* Old and new of the last one (512 + 512 per device) fit, so
         * moving it alone succeeds: the variables still work. */
        assert_int_equal(reshard1(&e, v[2], to[2]), XRT_OK);
        check_var_ex(&e, v[2], &l[2], data[2], to[2], false);
      }
      /* The new pieces alone do not fit below 17.5 KiB per device. */
      if (mem < 17 * 1024 + 512) assert_int_not_equal(st, XRT_OK);
      /* Old and new together fit well from 32 KiB. */
      if (mem >= 32 * 1024) assert_int_equal(st, XRT_OK);
    }
    for (int i = 0; i < 3; i++) xrt_variable_release(v[i]);
    env_close(&e);
  }
  assert_true(ok > 0);
  assert_true(exhausted > 0);
  for (int i = 0; i < 3; i++) free(data[i]);
}

/* ---- use in execution ---- */

static const char *step_src =
    "func.func @main(%w: tensor<4x4xf32>, %g: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
    "  %lr = stablehlo.constant dense<5.000000e-01> : tensor<4x4xf32>\n"
    "  %d = stablehlo.multiply %lr, %g : tensor<4x4xf32>\n"
    "  %r = stablehlo.subtract %w, %d : tensor<4x4xf32>\n"
    "  func.return %r : tensor<4x4xf32>\n"
    "}\n";

/* w = w - 0.5 * g on 8 devices updates w in place (donation), keeping its
 * format; an injected kernel fault leaves it unchanged and usable. */
static void test_execute_update(void **state) {
  (void)state;
  env e;
  env_open(&e, 0);
  xrt_shape l = TU_SHAPE(XRT_F32, 32, 4);
  fmt f = f_new("d0[8]", 2);
  f_chunk(&f, 0, 8, 0), f_axis(&f, 0), f = f_on(f, shuffled);
  float w[128], g[128], want[128];
  for (int i = 0; i < 128; i++) w[i] = (float)i, g[i] = (float)(i % 9) - 4;
  xrt_variable *v = make_var(&e, "w", &l, w, &f);
  xrt_device *devs[NDEV];
  vf(&e, &f, devs);
  xrt_sharded_array *ga = NULL;
  assert_int_equal(xrt_sharded_array_from_host(e.c, &l, g, &f.spec, devs, NDEV, &ga),
                   XRT_OK);
  xrt_executable *exe = tu_compile(e.c, step_src, NDEV, f.dev);
  xrt_variable_arg args[2] = {{v, NULL}, {NULL, ga}};
  int updates[1] = {0};
  xrt_sharded_array *out[1] = {(xrt_sharded_array *)&out};
  uint64_t key = xrt_variable_format_key(v);
  for (int step = 1; step <= 3; step++) {
    assert_int_equal(xrt_execute_variables(exe, args, 2, updates, out, 1, NULL),
                     XRT_OK);
    assert_null(out[0]);
    for (int i = 0; i < 128; i++) want[i] = (float)i - 0.5f * (float)step * g[i];
    check_var(&e, v, &l, want, &f);
    assert_true(xrt_variable_format_key(v) == key);
  }
  /* A failed execution changes nothing. */
  assert_int_equal(xrt_device_inject_fault(e.d[4], 0), XRT_OK);
  assert_int_not_equal(xrt_execute_variables(exe, args, 2, updates, out, 1, NULL),
                       XRT_OK);
  check_var(&e, v, &l, want, &f);
  /* ... and the variable is still usable: a reshard, then a step in the
   * old format again. */
  fmt r = f_new("repl8", 2);
  f_repl(&r, 8), r = f_on(r, NULL);
  assert_int_equal(reshard1(&e, v, &r), XRT_OK);
  check_var(&e, v, &l, want, &r);
  assert_int_equal(reshard1(&e, v, &f), XRT_OK);
  assert_int_equal(xrt_execute_variables(exe, args, 2, updates, out, 1, NULL),
                   XRT_OK);
  for (int i = 0; i < 128; i++) want[i] = (float)i - 2.0f * g[i];
  check_var(&e, v, &l, want, &f);
  /* In another format the executable's pieces no longer fit: refused,
   * unchanged. */
  assert_int_equal(reshard1(&e, v, &r), XRT_OK);
  assert_int_not_equal(xrt_execute_variables(exe, args, 2, updates, out, 1, NULL),
                       XRT_OK);
  check_var(&e, v, &l, want, &r);
  xrt_executable_release(exe);
  xrt_sharded_array_release(ga);
  xrt_variable_release(v);
  env_close(&e);
}

/* ---- concurrency: 4 threads, own variables stepped, a shared one
 * resharded back and forth ---- */

#define THREADS 4
#define ITERS 25

typedef struct conc {
  env *e;
  xrt_variable *shared;
  const xrt_shape *sl;
  const float *sdata;
  fmt sf[2];
  pthread_mutex_t mu;
  char error[512];
  bool failed;
} conc;

typedef struct worker {
  conc *c;
  int t;
} worker;

static void conc_fail(conc *c, const char *fmt_, int t, int it,
                      const char *more) {
  pthread_mutex_lock(&c->mu);
  if (!c->failed)
    snprintf(c->error, sizeof c->error, fmt_, t, it, more);
  c->failed = true;
  pthread_mutex_unlock(&c->mu);
}

static bool conc_failed(conc *c) {
  pthread_mutex_lock(&c->mu);
  bool f = c->failed;
  pthread_mutex_unlock(&c->mu);
  return f;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  conc *c = w->c;
  env *e = c->e;
  int t = w->t, ids[2] = {2 * w->t, 2 * w->t + 1};
  xrt_shape l = TU_SHAPE(XRT_F32, 8, 4);
  fmt f = f_new("d0[2]", 2);
  f_chunk(&f, 0, 2, 0), f_axis(&f, 0), f = f_on(f, ids);
  float w0[32], g[32], got[32], shared[16 * 8];
  for (int i = 0; i < 32; i++)
    w0[i] = (float)(100 * t + i), g[i] = (float)((i + t) % 5);
  xrt_device *devs[2] = {e->d[ids[0]], e->d[ids[1]]};
  xrt_variable_format vfmt = {&f.spec, devs, 2};
  xrt_variable *v = NULL;
  xrt_sharded_array *ga = NULL;
  xrt_executable *exe = NULL;
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.num_replicas = 2;
  co.device_assignment = ids;
  if (xrt_variable_create(e->c, "own", &l, w0, &vfmt, &v) ||
      xrt_sharded_array_from_host(e->c, &l, g, &f.spec, devs, 2, &ga) ||
      xrt_compile(e->c, step_src, strlen(step_src), &co, &exe)) {
    conc_fail(c, "thread %d (%d): setup: %s", t, 0, xrt_last_error());
    goto done;
  }
  xrt_variable_arg args[2] = {{v, NULL}, {NULL, ga}};
  int updates[1] = {0};
  for (int it = 0; it < ITERS && !conc_failed(c); it++) {
    xrt_sharded_array *out[1];
    if (xrt_execute_variables(exe, args, 2, updates, out, 1, NULL)) {
      conc_fail(c, "thread %d iteration %d: step: %s", t, it, xrt_last_error());
      break;
    }
    const fmt *to = &c->sf[(it + t) % 2];
    xrt_device *sdevs[NDEV];
    xrt_variable_format sfmt = vf(e, to, sdevs);
    if (xrt_variables_reshard(&c->shared, &sfmt, 1, NULL)) {
      conc_fail(c, "thread %d iteration %d: reshard: %s", t, it,
                xrt_last_error());
      break;
    }
    if (xrt_variable_to_host(c->shared, shared, sizeof shared) ||
        memcmp(shared, c->sdata, sizeof shared)) {
      conc_fail(c, "thread %d iteration %d: shared variable: %s", t, it,
                "wrong values or error");
      break;
    }
    if (xrt_variable_to_host(v, got, sizeof got)) {
      conc_fail(c, "thread %d iteration %d: to_host: %s", t, it,
                xrt_last_error());
      break;
    }
    for (int i = 0; i < 32; i++)
      if (got[i] != w0[i] - 0.5f * (float)(it + 1) * g[i]) {
        conc_fail(c, "thread %d iteration %d: own variable: %s", t, it,
                  "wrong value");
        break;
      }
  }
done:
  xrt_executable_release(exe);
  xrt_sharded_array_release(ga);
  xrt_variable_release(v);
  return NULL;
}

static void test_concurrent(void **state) {
  (void)state;
  env e;
  env_open(&e, 0);
  conc c;
  memset(&c, 0, sizeof c);
  pthread_mutex_init(&c.mu, NULL);
  c.e = &e;
  xrt_shape sl = TU_SHAPE(XRT_F32, 16, 8);
  float sdata[16 * 8];
  for (int i = 0; i < 16 * 8; i++) sdata[i] = (float)i * 1.5f;
  c.sl = &sl;
  c.sdata = sdata;
  fmt a = f_new("d0[8]", 2), b = f_new("d1[4]@4..7", 2);
  f_chunk(&a, 0, 8, 0), f_axis(&a, 0), c.sf[0] = f_on(a, NULL);
  f_chunk(&b, 1, 4, 0), f_axis(&b, 0), c.sf[1] = f_on(b, upper4);
  c.shared = make_var(&e, "shared", &sl, sdata, &c.sf[0]);
  pthread_t th[THREADS];
  worker w[THREADS];
  for (int t = 0; t < THREADS; t++) {
    w[t].c = &c;
    w[t].t = t;
    assert_int_equal(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
  }
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  if (c.failed) fail_msg("%s", c.error);
  /* The last reshard left it in one of the two formats, intact. */
  xrt_device *devs[NDEV];
  xrt_variable_format fa = vf(&e, &c.sf[0], devs);
  const fmt *now =
      xrt_variable_format_key(c.shared) == xrt_variable_format_key_of(&sl, &fa)
          ? &c.sf[0]
          : &c.sf[1];
  check_var(&e, c.shared, &sl, sdata, now);
  xrt_variable_release(c.shared);
  assert_int_equal(stats(&e).device_bytes_in_use, 0);
  pthread_mutex_destroy(&c.mu);
  env_close(&e);
}

/* ---- .npy ---- */

static char tmpdir[64];

static void tmp_path(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void test_npy(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/xrt_test_reshard_XXXXXX");
  assert_non_null(mkdtemp(tmpdir));
  env e;
  env_open(&e, 0);
  fmt f[MAX_FMTS];
  formats_2d(f);
  const fmt *d0 = &f[2], *mix = &f[9];
  xrt_shape l = TU_SHAPE(XRT_F32, 8, 16);
  void *a = make_array(&l, 1), *b = make_array(&l, 2);
  xrt_variable *va = make_var(&e, "a", &l, a, d0);
  xrt_variable *vb = make_var(&e, "b", &l, b, mix);
  char pa[128], pb[128], p[128];
  tmp_path(pa, sizeof pa, "a.npy");
  tmp_path(pb, sizeof pb, "b.npy");
  assert_int_equal(xrt_variable_save(va, pa), XRT_OK);
  assert_int_equal(xrt_variable_save(vb, pb), XRT_OK);
  /* The file holds the logical array after a header. */
  size_t n;
  char *file = tu_read_file(pa, &n);
  assert_true(n > xrt_shape_bytes(&l));
  assert_memory_equal(file, "\x93NUMPY", 6);
  assert_memory_equal(file + n - xrt_shape_bytes(&l), a, xrt_shape_bytes(&l));
  /* Load replaces the values and keeps the format. */
  assert_int_equal(xrt_variable_load(va, pb), XRT_OK);
  check_var(&e, va, &l, b, d0);
  assert_int_equal(xrt_variable_load(va, pa), XRT_OK);
  check_var(&e, va, &l, a, d0);
  /* A new variable from the file, in another format. */
  xrt_variable *vc = NULL;
  xrt_device *devs[NDEV];
  xrt_variable_format fm = vf(&e, mix, devs);
  assert_int_equal(xrt_variable_create_from_npy(e.c, "c", pa, &fm, &vc), XRT_OK);
  check_var(&e, vc, &l, a, mix);
  xrt_variable_release(vc);

  /* Bad files: each an error, va unchanged. */
  uint64_t key = xrt_variable_format_key(va);
  tmp_path(p, sizeof p, "trunc.npy");
  tu_write_file(p, file, n - 5); /* data cut short */
  assert_int_not_equal(xrt_variable_load(va, p), XRT_OK);
  tu_write_file(p, file, 30); /* header cut short */
  assert_int_not_equal(xrt_variable_load(va, p), XRT_OK);
  tmp_path(p, sizeof p, "garbage.npy");
  const char *text = "this is not a numpy file at all, just text\n";
  tu_write_file(p, text, strlen(text));
  assert_int_not_equal(xrt_variable_load(va, p), XRT_OK);
  tmp_path(p, sizeof p, "missing.npy");
  assert_int_not_equal(xrt_variable_load(va, p), XRT_OK);
  /* Another type, another shape: invalid argument naming both. */
  xrt_shape ls8 = TU_SHAPE(XRT_S8, 8, 16), l2 = TU_SHAPE(XRT_F32, 16, 8);
  void *s8 = make_array(&ls8, 3), *t2 = make_array(&l2, 3);
  xrt_variable *v8 = make_var(&e, "s8", &ls8, s8, d0);
  xrt_variable *vt = make_var(&e, "t", &l2, t2, d0);
  tmp_path(p, sizeof p, "s8.npy");
  assert_int_equal(xrt_variable_save(v8, p), XRT_OK);
  assert_int_equal(xrt_variable_load(va, p), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "f32");
  tmp_path(p, sizeof p, "t.npy");
  assert_int_equal(xrt_variable_save(vt, p), XRT_OK);
  assert_int_equal(xrt_variable_load(va, p), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "16");
  assert_true(xrt_variable_format_key(va) == key);
  check_var(&e, va, &l, a, d0);
  /* A save into a missing directory fails. */
  tmp_path(p, sizeof p, "no/such/dir/x.npy");
  assert_int_not_equal(xrt_variable_save(va, p), XRT_OK);
  /* create_from_npy of a bad file returns nothing. */
  tmp_path(p, sizeof p, "garbage.npy");
  vc = (xrt_variable *)&vc;
  assert_int_not_equal(xrt_variable_create_from_npy(e.c, "c", p, &fm, &vc),
                       XRT_OK);
  assert_null(vc);

  xrt_variable_release(v8);
  xrt_variable_release(vt);
  xrt_variable_release(va);
  xrt_variable_release(vb);
  free(a), free(b), free(s8), free(t2), free(file);
  env_close(&e);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  assert_int_equal(system(cmd), 0);
}

/* ---- bad input ---- */

static void expect_reshard_fails(env *e, xrt_variable *v,
                                 const xrt_variable_format *f,
                                 const xrt_shape *l, const void *data,
                                 const fmt *now, const char *sub) {
  assert_int_equal(xrt_variables_reshard(&v, f, 1, NULL), XRT_INVALID_ARGUMENT);
  if (sub) TU_ASSERT_CONTAINS(xrt_last_error(), sub);
  check_var_ex(e, v, l, data, now, false);
}

static void test_bad_input(void **state) {
  (void)state;
  env e;
  env_open(&e, 0);
  fmt f[MAX_FMTS];
  formats_2d(f);
  const fmt *d0 = &f[2], *repl = &f[8];
  xrt_shape l = TU_SHAPE(XRT_F32, 8, 16);
  void *a = make_array(&l, 1), *b = make_array(&l, 2);
  xrt_variable *va = make_var(&e, "a", &l, a, d0);
  xrt_variable *vb = make_var(&e, "b", &l, b, d0);
  xrt_device *devs[NDEV];
  xrt_variable_format good = vf(&e, repl, devs);

  /* A spec that does not divide the shape: 3 chunks of 16. */
  fmt bad = f_new("d1[3]", 2);
  f_chunk(&bad, 1, 3, 0), f_axis(&bad, 0), bad = f_on(bad, NULL);
  xrt_device *bdevs[NDEV];
  xrt_variable_format bf = vf(&e, &bad, bdevs);
  assert_true(xrt_variable_format_key_of(&l, &bf) == 0);
  expect_reshard_fails(&e, va, &bf, &l, a, d0, "dimension 1");
  xrt_variable *vx = (xrt_variable *)&vx;
  assert_int_equal(xrt_variable_create(e.c, "x", &l, a, &bf, &vx),
                   XRT_INVALID_ARGUMENT);
  assert_null(vx);

  /* Device lists: too short, a NULL, a repeated device, another client's. */
  xrt_device *list[NDEV];
  memcpy(list, devs, sizeof list);
  xrt_variable_format g = {good.spec, list, NDEV - 1};
  expect_reshard_fails(&e, va, &g, &l, a, d0, NULL);
  g.num_devices = NDEV;
  list[3] = NULL;
  expect_reshard_fails(&e, va, &g, &l, a, d0, NULL);
  list[3] = list[4];
  expect_reshard_fails(&e, va, &g, &l, a, d0, NULL);
  xrt_client *other = tu_client(NDEV, 1, 0);
  list[3] = xrt_client_device(other, 3);
  expect_reshard_fails(&e, va, &g, &l, a, d0, NULL);
  g.spec = NULL;
  list[3] = devs[3];
  expect_reshard_fails(&e, va, &g, &l, a, d0, NULL);
  assert_true(xrt_variable_format_key_of(&l, &g) == 0);

  /* A variable twice in one call (even to the same format). */
  xrt_variable *twice[2] = {va, va};
  xrt_variable_format two[2] = {good, good};
  assert_int_equal(xrt_variables_reshard(twice, two, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  check_var_ex(&e, va, &l, a, d0, false);
  /* Argument misuse. */
  xrt_variable *pair[2] = {va, vb};
  assert_int_equal(xrt_variables_reshard(pair, two, -1, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variables_reshard(NULL, two, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variables_reshard(pair, NULL, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  xrt_variable *withnull[2] = {va, NULL};
  assert_int_equal(xrt_variables_reshard(withnull, two, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  check_var_ex(&e, va, &l, a, d0, false);
  assert_int_equal(xrt_variable_to_host(va, a, 10), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variable_to_host(va, NULL, xrt_shape_bytes(&l)),
                   XRT_INVALID_ARGUMENT);
  /* Creation misuse. */
  vx = (xrt_variable *)&vx;
  assert_int_equal(xrt_variable_create(NULL, "x", &l, a, &good, &vx),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variable_create(e.c, "x", NULL, a, &good, &vx),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variable_create(e.c, "x", &l, NULL, &good, &vx),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variable_create(e.c, "x", &l, a, NULL, &vx),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variable_create(e.c, "x", &l, a, &good, NULL),
                   XRT_INVALID_ARGUMENT);
  /* Devices of another client. */
  xrt_variable_format theirs = {good.spec, list, NDEV};
  for (int k = 0; k < NDEV; k++) list[k] = xrt_client_device(other, k);
  assert_int_equal(xrt_variable_create(e.c, "x", &l, a, &theirs, &vx),
                   XRT_INVALID_ARGUMENT);

  /* Variables of two clients in one call: refused, neither moves. */
  fmt o1 = f_on(f_new("none@0", 2), NULL);
  xrt_variable_format of = {&o1.spec, list, 1};
  list[0] = xrt_client_device(other, 0);
  xrt_variable *ov = NULL;
  assert_int_equal(xrt_variable_create(other, "o", &l, b, &of, &ov), XRT_OK);
  xrt_variable *mixed[2] = {va, ov};
  xrt_variable_format mf[2] = {good, of};
  assert_int_equal(xrt_variables_reshard(mixed, mf, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  check_var_ex(&e, va, &l, a, d0, false);
  assert_int_equal(xrt_variable_num_devices(ov), 1);
  assert_ptr_equal(xrt_variable_device(ov, 0), list[0]);
  char *host = malloc(xrt_shape_bytes(&l));
  assert_int_equal(xrt_variable_to_host(ov, host, xrt_shape_bytes(&l)), XRT_OK);
  assert_memory_equal(host, b, xrt_shape_bytes(&l));
  free(host);
  assert_int_equal(xrt_variable_release(ov), XRT_OK);

  /* A released variable: every call says so; in a call with a live one,
   * the live one does not move. */
  assert_int_equal(xrt_variable_release(vb), XRT_OK);
  assert_int_equal(xrt_variables_reshard(&vb, &good, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variables_reshard(pair, two, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  check_var_ex(&e, va, &l, a, d0, false);
  assert_int_equal(xrt_variable_to_host(vb, b, xrt_shape_bytes(&l)),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_variable_format_key(vb), 0);
  assert_int_equal(xrt_variable_num_devices(vb), -1);
  assert_int_not_equal(xrt_variable_release(vb), XRT_OK);
  assert_int_equal(xrt_variable_release(NULL), XRT_OK);
  char path[] = "/tmp/xrt_test_reshard_never.npy";
  assert_int_equal(xrt_variable_save(vb, path), XRT_INVALID_ARGUMENT);

  xrt_client_release(other);
  xrt_variable_release(va);
  free(a), free(b);
  env_close(&e);
}

/* A variable from a sharded array takes over its pieces without copies. */
static void test_from_array(void **state) {
  (void)state;
  env e;
  env_open(&e, 0);
  fmt f[MAX_FMTS];
  formats_2d(f);
  const fmt *ff = &f[7]; /* d0[2]xd1[4]@shuffled */
  xrt_shape l = TU_SHAPE(XRT_BF16, 8, 16);
  void *a = make_array(&l, 6);
  xrt_device *devs[NDEV];
  vf(&e, ff, devs);
  xrt_sharded_array *arr = NULL;
  assert_int_equal(
      xrt_sharded_array_from_host(e.c, &l, a, &ff->spec, devs, NDEV, &arr),
      XRT_OK);
  xrt_client_stats s0 = stats(&e);
  xrt_variable *v = NULL;
  assert_int_equal(xrt_variable_from_array("arr", arr, &v), XRT_OK);
  xrt_client_stats s1 = stats(&e);
  assert_stats_equal(&s0, &s1);
  assert_string_equal(xrt_variable_name(v), "arr");
  check_var(&e, v, &l, a, ff);
  /* The array handle was consumed. */
  assert_int_equal(xrt_sharded_array_num_shards(arr), -1);
  assert_int_equal(xrt_variable_from_array("arr", NULL, &v), XRT_INVALID_ARGUMENT);
  xrt_variable_release(v);
  free(a);
  env_close(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pairs_2d),
      cmocka_unit_test(test_pairs_3d),
      cmocka_unit_test(test_pairs_1d),
      cmocka_unit_test(test_chain_and_via_host),
      cmocka_unit_test(test_noop),
      cmocka_unit_test(test_pieces_kept),
      cmocka_unit_test(test_atomic_transfer_faults),
      cmocka_unit_test(test_atomic_alloc_faults),
      cmocka_unit_test(test_atomic_invalid_last),
      cmocka_unit_test(test_atomic_memory),
      cmocka_unit_test(test_execute_update),
      cmocka_unit_test(test_concurrent),
      cmocka_unit_test(test_npy),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_from_array),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
