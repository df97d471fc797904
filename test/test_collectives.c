/*
 * test_collectives.c - collectives, device-to-device send/recv, launches and
 * fault injection in the simulator.
 *
 * Most tests drive the sim plugin's table directly: compile a module for a
 * launch shape, then call execute from one host thread per participant
 * with a shared launch_id, as the core does.  Expected values come from
 * reference loops written here.
 */
#include "test_util.h"

#include <pthread.h>

#define TC_MAXP 16 /* participants */
#define TC_MAXV 4  /* inputs or outputs per participant */


/* One simulated client of ndev devices. */
typedef struct tc_env {
  const xrt_plugin_api *api;
  void *client;
  int ndev;
} tc_env;

static tc_env tc_open(int ndev) {
  tc_env env = {xrt_sim_plugin_api(), NULL, ndev};
  xrt_plugin_client_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.num_devices = ndev;
  a.device_memory_bytes = (uint64_t)1 << 32;
  a.allocator.alloc = tu_alloc;
  a.allocator.free = tu_free;
  a.threads_per_device = 1;
  xrt_plugin_error err;
  assert_int_equal(env.api->client_create(&a, &env.client, &err), XRT_OK);
  return env;
}

static void tc_close(tc_env *env) { env->api->client_destroy(env->client); }

/* A compiled program: the executable and what keeps its module alive. */
typedef struct tc_exe {
  xrt_program *prog;
  void *exe;
} tc_exe;

/* Compiles @main of src for nrep x npart; returns the status, with the
 * message in *msg. */
static xrt_status tc_compile(tc_env *env, const char *src, int nrep,
                             int npart, tc_exe *out, char *msg) {
  memset(out, 0, sizeof *out);
  xrt_status s = xrt_program_parse(src, strlen(src), NULL, &out->prog);
  if (s) {
    snprintf(msg, 1024, "%s", xrt_last_error());
    return s;
  }
  const xrt_ir_module *m = xrt_program_module(out->prog);
  int entry = 0;
  for (int i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, "main") == 0) entry = i;
  xrt_plugin_compile_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.module = m;
  a.entry = entry;
  a.num_replicas = nrep;
  a.num_partitions = npart;
  xrt_plugin_error err;
  err.message[0] = 0;
  s = env->api->compile(env->client, &a, &out->exe, &err);
  if (s) {
    snprintf(msg, 1024, "%s", err.message);
    xrt_program_release(out->prog);
    out->prog = NULL;
  }
  return s;
}

static void tc_exe_free(tc_env *env, tc_exe *x) {
  if (x->exe) env->api->executable_destroy(x->exe);
  xrt_program_release(x->prog);
  memset(x, 0, sizeof *x);
}

/* One launch: per participant p (device p) its executable, inputs and
 * outputs; results come back in out[p][j], status and message in st/msg. */
typedef struct tc_launch {
  tc_env *env;
  int nrep, npart;
  uint64_t id;
  void *exe[TC_MAXP];
  int nin, nout;
  size_t in_bytes[TC_MAXV], out_bytes[TC_MAXV];
  const void *in[TC_MAXP][TC_MAXV];
  void *out[TC_MAXP][TC_MAXV];
  const char *abort_msg[TC_MAXP];
  xrt_status st[TC_MAXP];
  char msg[TC_MAXP][1024];
} tc_launch;

typedef struct tc_thread {
  tc_launch *L;
  int p;
  void *mem_in[TC_MAXV], *mem_out[TC_MAXV];
} tc_thread;

static void *tc_participant(void *arg) {
  tc_thread *t = (tc_thread *)arg;
  tc_launch *L = t->L;
  xrt_plugin_execute_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.executable = L->exe[t->p];
  a.device = t->p;
  a.launch_id = L->id;
  a.replica = t->p / L->npart;
  a.partition = t->p % L->npart;
  a.num_replicas = L->nrep;
  a.num_partitions = L->npart;
  a.args = t->mem_in;
  a.num_args = L->nin;
  a.outs = t->mem_out;
  a.num_outs = L->nout;
  a.abort_message = L->abort_msg[t->p];
  xrt_plugin_error err;
  err.message[0] = 0;
  L->st[t->p] = L->env->api->execute(L->env->client, &a, &err);
  snprintf(L->msg[t->p], sizeof L->msg[t->p], "%s", err.message);
  return NULL;
}

static uint64_t tc_next_id = 1;

/* Uploads, runs every participant on its own thread, downloads. */
static void tc_run(tc_launch *L) {
  const xrt_plugin_api *api = L->env->api;
  int n = L->nrep * L->npart;
  tc_thread th[TC_MAXP];
  pthread_t tid[TC_MAXP];
  xrt_plugin_error err;
  assert_true(n <= TC_MAXP && n <= L->env->ndev);
  L->id = tc_next_id++;
  for (int p = 0; p < n; p++) {
    th[p].L = L;
    th[p].p = p;
    for (int j = 0; j < L->nin; j++) {
      assert_int_equal(api->buffer_alloc(L->env->client, p, L->in_bytes[j],
                                         &th[p].mem_in[j], &err), XRT_OK);
      assert_int_equal(api->buffer_write(L->env->client, p, th[p].mem_in[j],
                                         L->in[p][j], L->in_bytes[j], &err),
                       XRT_OK);
    }
    for (int j = 0; j < L->nout; j++)
      assert_int_equal(api->buffer_alloc(L->env->client, p, L->out_bytes[j],
                                         &th[p].mem_out[j], &err), XRT_OK);
  }
  for (int p = 0; p < n; p++)
    assert_int_equal(pthread_create(&tid[p], NULL, tc_participant, &th[p]),
                     0);
  for (int p = 0; p < n; p++) pthread_join(tid[p], NULL);
  for (int p = 0; p < n; p++) {
    for (int j = 0; j < L->nout; j++) {
      if (L->st[p] == XRT_OK)
        assert_int_equal(api->buffer_read(L->env->client, p, th[p].mem_out[j],
                                          L->out[p][j], L->out_bytes[j],
                                          &err), XRT_OK);
      api->buffer_free(L->env->client, p, th[p].mem_out[j]);
    }
    for (int j = 0; j < L->nin; j++)
      api->buffer_free(L->env->client, p, th[p].mem_in[j]);
  }
}

/* Every participant runs x. */
static void tc_same(tc_launch *L, const tc_exe *x) {
  for (int p = 0; p < TC_MAXP; p++) L->exe[p] = x->exe;
}

/* Runs L and fails the test unless every participant succeeded. */
static void tc_run_ok(tc_launch *L) {
  tc_run(L);
  for (int p = 0; p < L->nrep * L->npart; p++) {
    if (L->st[p] != XRT_OK) fail_msg("participant %d: %s", p, L->msg[p]);
  }
}

/* Compiles src for nrep x npart; fails the test if it does not compile. */
static tc_exe tc_compile_ok(tc_env *env, const char *src, int nrep,
                            int npart) {
  tc_exe x;
  char msg[1024];
  if (tc_compile(env, src, nrep, npart, &x, msg) != XRT_OK)
    fail_msg("compile failed: %s", msg);
  return x;
}

/* What most tests need: a client of nrep x npart devices, src compiled for
 * that launch shape and a launch (returned) in which every participant runs
 * it.  Add its inputs and outputs with tc_in / tc_out; tc_end frees it. */
typedef struct tc_fixture {
  tc_env env;
  tc_exe x;
  tc_launch L;
} tc_fixture;

static tc_launch *tc_begin(tc_fixture *f, const char *src, int nrep,
                           int npart) {
  f->env = tc_open(nrep * npart);
  f->x = tc_compile_ok(&f->env, src, nrep, npart);
  memset(&f->L, 0, sizeof f->L);
  f->L.env = &f->env;
  f->L.nrep = nrep;
  f->L.npart = npart;
  tc_same(&f->L, &f->x);
  return &f->L;
}

static void tc_end(tc_fixture *f) {
  tc_exe_free(&f->env, &f->x);
  tc_close(&f->env);
}

/* Declares the next input (output) of every participant: bytes long. */
static void tc_in(tc_launch *L, size_t bytes) {
  assert_true(L->nin < TC_MAXV);
  L->in_bytes[L->nin++] = bytes;
}

static void tc_out(tc_launch *L, size_t bytes) {
  assert_true(L->nout < TC_MAXV);
  L->out_bytes[L->nout++] = bytes;
}

/* Runs src once on nrep x npart participants with one input and one
 * output: participant p reads in + p * in_bytes and writes out + p *
 * out_bytes (arrays indexed by participant). */
static void tc_run1(const char *src, int nrep, int npart, const void *in,
                    size_t in_bytes, void *out, size_t out_bytes) {
  tc_fixture f;
  tc_launch *L = tc_begin(&f, src, nrep, npart);
  tc_in(L, in_bytes);
  tc_out(L, out_bytes);
  for (int p = 0; p < nrep * npart; p++) {
    L->in[p][0] = (const char *)in + (size_t)p * in_bytes;
    L->out[p][0] = (char *)out + (size_t)p * out_bytes;
  }
  tc_run_ok(L);
  tc_end(&f);
}

/* The region of a reduction: %x op %y on tensor<t>. */
#define TC_REDUCER(op, t)                                                    \
  "    ^bb0(%x: tensor<" t ">, %y: tensor<" t ">):\n"                       \
  "      %s = stablehlo." op " %x, %y : tensor<" t ">\n"                    \
  "      stablehlo.return %s : tensor<" t ">\n"

/* ---- all_reduce ---- */

/* Two groups of replicas, sum of f32: each replica's result is the sum
 * over its group. */
static void test_all_reduce_cross_replica_groups(void **state) {
  (void)state;
  const char *src =
      "func.func @main(%a: tensor<5xf32>) -> tensor<5xf32> {\n"
      "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
      TC_REDUCER("add", "f32")
      "  }) {replica_groups = dense<[[0, 2], [3, 1]]> : tensor<2x2xi64>}\n"
      "    : (tensor<5xf32>) -> tensor<5xf32>\n"
      "  return %r : tensor<5xf32>\n"
      "}\n";
  float in[4][5], out[4][5];
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < 5; i++) in[p][i] = (float)(p + 1) * 10 + (float)i;
  tc_run1(src, 4, 1, in, sizeof in[0], out, sizeof out[0]);
  static const int group_of[4][2] = {{0, 2}, {3, 1}, {0, 2}, {3, 1}};
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < 5; i++) {
      float want = in[group_of[p][0]][i] + in[group_of[p][1]][i];
      assert_true(out[p][i] == want);
    }
}

/* channel_handle > 0 without use_global_device_ids: the replica groups
 * span every partition (cross_replica_and_partition); max of i32. */
static void test_all_reduce_cross_replica_and_partition(void **state) {
  (void)state;
  const char *src =
      "func.func @main(%a: tensor<3xi32>) -> tensor<3xi32> {\n"
      "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
      TC_REDUCER("maximum", "i32")
      "  }) {replica_groups = dense<[[0], [1]]> : tensor<2x1xi64>,\n"
      "      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>}\n"
      "    : (tensor<3xi32>) -> tensor<3xi32>\n"
      "  return %r : tensor<3xi32>\n"
      "}\n";
  int32_t in[4][3], out[4][3];
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < 3; i++) in[p][i] = (p * 7 + i * 5) % 11 - 5;
  tc_run1(src, 2, 2, in, sizeof in[0], out, sizeof out[0]);
  /* groups: replica 0's partitions {0, 1} and replica 1's {2, 3} */
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < 3; i++) {
      int base = (p / 2) * 2;
      int32_t want = in[base][i] > in[base + 1][i] ? in[base][i]
                                                   : in[base + 1][i];
      assert_int_equal(out[p][i], want);
    }
}

/* use_global_device_ids: groups of flattened ids across replicas and
 * partitions; sum of i64, variadic (two operands). */
static void test_all_reduce_flattened_ids_variadic(void **state) {
  (void)state;
  const char *src =
      "func.func @main(%a: tensor<2xi64>, %b: tensor<3xi64>)"
      " -> (tensor<2xi64>, tensor<3xi64>) {\n"
      "  %r:2 = \"stablehlo.all_reduce\"(%a, %b) ({\n"
      TC_REDUCER("add", "i64")
      "  }) {replica_groups = dense<[[0, 3], [2, 1]]> : tensor<2x2xi64>,\n"
      "      channel_handle = #stablehlo.channel_handle<handle = 5, type = 0>,\n"
      "      use_global_device_ids}\n"
      "    : (tensor<2xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<3xi64>)\n"
      "  return %r#0, %r#1 : tensor<2xi64>, tensor<3xi64>\n"
      "}\n";
  int64_t a[4][2], b[4][3], oa[4][2], ob[4][3];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, src, 2, 2);
  tc_in(L, sizeof a[0]);
  tc_out(L, sizeof a[0]);
  tc_in(L, sizeof b[0]);
  tc_out(L, sizeof b[0]);
  for (int p = 0; p < 4; p++) {
    for (int i = 0; i < 2; i++) a[p][i] = (int64_t)1 << (10 * p + i);
    for (int i = 0; i < 3; i++) b[p][i] = -(int64_t)(p + 1) * 1000 - i;
    L->in[p][0] = a[p], L->in[p][1] = b[p];
    L->out[p][0] = oa[p], L->out[p][1] = ob[p];
  }
  tc_run_ok(L);
  static const int peer[4] = {3, 2, 1, 0};
  for (int p = 0; p < 4; p++) {
    for (int i = 0; i < 2; i++)
      assert_true(oa[p][i] == a[p][i] + a[peer[p]][i]);
    for (int i = 0; i < 3; i++)
      assert_true(ob[p][i] == b[p][i] + b[peer[p]][i]);
  }
  tc_end(&f);
}

/* A computation that is not one op runs as a region: x + 2y folded left
 * over the group in group order, on f64; and or-reduction on pred. */
static void test_all_reduce_region_f64_and_pred(void **state) {
  (void)state;
  const char *src =
      "func.func @main(%a: tensor<4xf64>, %p: tensor<4xi1>)"
      " -> (tensor<4xf64>, tensor<4xi1>) {\n"
      "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
      "    ^bb0(%x: tensor<f64>, %y: tensor<f64>):\n"
      "      %two = stablehlo.constant dense<2.0> : tensor<f64>\n"
      "      %t = stablehlo.multiply %y, %two : tensor<f64>\n"
      "      %s = stablehlo.add %x, %t : tensor<f64>\n"
      "      stablehlo.return %s : tensor<f64>\n"
      "  }) {replica_groups = dense<[[2, 0, 1]]> : tensor<1x3xi64>}\n"
      "    : (tensor<4xf64>) -> tensor<4xf64>\n"
      "  %q = \"stablehlo.all_reduce\"(%p) ({\n"
      TC_REDUCER("or", "i1")
      "  }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>}\n"
      "    : (tensor<4xi1>) -> tensor<4xi1>\n"
      "  return %r, %q : tensor<4xf64>, tensor<4xi1>\n"
      "}\n";
  double a[3][4], oa[3][4];
  uint8_t pr[3][4], op[3][4];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, src, 3, 1);
  tc_in(L, sizeof a[0]);
  tc_out(L, sizeof a[0]);
  tc_in(L, sizeof pr[0]);
  tc_out(L, sizeof pr[0]);
  for (int p = 0; p < 3; p++) {
    for (int i = 0; i < 4; i++) {
      a[p][i] = (p + 1) * 0.5 + i;
      pr[p][i] = (uint8_t)((i >> p) & 1) & (i != 3);
    }
    L->in[p][0] = a[p], L->in[p][1] = pr[p];
    L->out[p][0] = oa[p], L->out[p][1] = op[p];
  }
  tc_run_ok(L);
  for (int p = 0; p < 3; p++)
    for (int i = 0; i < 4; i++) {
      double want = (a[2][i] + 2 * a[0][i]) + 2 * a[1][i];
      assert_true(oa[p][i] == want);
      uint8_t any = pr[0][i] | pr[1][i] | pr[2][i];
      assert_int_equal(op[p][i], any);
    }
  tc_end(&f);
}

/* A large all_reduce over 8 devices (the slices of the reduce-scatter /
 * all-gather split are uneven: 1000003 elements), run twice so launches
 * and frames are reused. */
static void test_all_reduce_big_8(void **state) {
  (void)state;
  enum { N = 1000003, P = 8 };
  const char *src =
      "func.func @main(%a: tensor<1000003xf32>) -> tensor<1000003xf32> {\n"
      "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
      TC_REDUCER("add", "f32")
      "  }) {replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>}\n"
      "    : (tensor<1000003xf32>) -> tensor<1000003xf32>\n"
      "  return %r : tensor<1000003xf32>\n"
      "}\n";
  float *in[P], *out[P];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, src, P, 1);
  tc_in(L, sizeof(float) * N);
  tc_out(L, sizeof(float) * N);
  for (int p = 0; p < P; p++) {
    in[p] = (float *)malloc(sizeof(float) * N);
    out[p] = (float *)malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) in[p][i] = (float)((i * (p + 3)) % 1024);
    L->in[p][0] = in[p];
    L->out[p][0] = out[p];
  }
  for (int rep = 0; rep < 2; rep++) {
    tc_run_ok(L);
    for (int p = 0; p < P; p++)
      for (int i = 0; i < N; i += 997) {
        float want = in[0][i];
        for (int q = 1; q < P; q++) want += in[q][i];
        assert_true(out[p][i] == want);
      }
    for (int p = 0; p < P; p++) /* the last element of the last slice */
      assert_true(out[p][N - 1] == in[0][N - 1] + in[1][N - 1] +
                  in[2][N - 1] + in[3][N - 1] + in[4][N - 1] + in[5][N - 1] +
                  in[6][N - 1] + in[7][N - 1]);
  }
  for (int p = 0; p < P; p++) free(in[p]), free(out[p]);
  tc_end(&f);
}

/* ---- all_gather, reduce_scatter, all_to_all ---- */

/* cross_replica over 2 replicas x 2 partitions: each partition gathers
 * its replicas' operands along dimension 1. */
static void test_all_gather_partitions(void **state) {
  (void)state;
  const char *src =
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {\n"
      "  %r = \"stablehlo.all_gather\"(%a) {all_gather_dim = 1 : i64,\n"
      "      replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>}\n"
      "    : (tensor<2x3xf32>) -> tensor<2x6xf32>\n"
      "  return %r : tensor<2x6xf32>\n"
      "}\n";
  float in[4][2][3], out[4][2][6];
  for (int p = 0; p < 4; p++)
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 3; c++) in[p][r][c] = (float)(100 * p + 10 * r + c);
  tc_run1(src, 2, 2, in, sizeof in[0], out, sizeof out[0]);
  for (int p = 0; p < 4; p++) {
    int part = p % 2;
    int order[2] = {1 * 2 + part, 0 * 2 + part}; /* replicas 1, 0 */
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 6; c++)
        assert_true(out[p][r][c] == in[order[c / 3]][r][c % 3]);
  }
}

/* reduce_scatter of i32 over 4 replicas along dimension 0: replica k gets
 * rows [2k, 2k+2) of the sum. */
static void test_reduce_scatter_i32(void **state) {
  (void)state;
  const char *src =
      "func.func @main(%a: tensor<8x3xi32>) -> tensor<2x3xi32> {\n"
      "  %r = \"stablehlo.reduce_scatter\"(%a) ({\n"
      TC_REDUCER("add", "i32")
      "  }) {scatter_dimension = 0 : i64,\n"
      "      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
      "    : (tensor<8x3xi32>) -> tensor<2x3xi32>\n"
      "  return %r : tensor<2x3xi32>\n"
      "}\n";
  int32_t in[4][8][3], out[4][2][3];
  for (int p = 0; p < 4; p++)
    for (int r = 0; r < 8; r++)
      for (int c = 0; c < 3; c++) in[p][r][c] = (p + 1) * (r * 3 + c) - 7 * p;
  tc_run1(src, 4, 1, in, sizeof in[0], out, sizeof out[0]);
  for (int p = 0; p < 4; p++)
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 3; c++) {
        int32_t want = 0;
        for (int q = 0; q < 4; q++) want += in[q][2 * p + r][c];
        assert_int_equal(out[p][r][c], want);
      }
}

/* all_to_all across partitions (channel_handle > 0), 2 replicas x 2
 * partitions, i64 split along 1 and concatenated along 0. */
static void test_all_to_all_cross_partition(void **state) {
  (void)state;
  const char *src =
      "func.func @main(%a: tensor<2x4xi64>) -> tensor<4x2xi64> {\n"
      "  %r = \"stablehlo.all_to_all\"(%a) {split_dimension = 1 : i64,\n"
      "      concat_dimension = 0 : i64, split_count = 2 : i64,\n"
      "      replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>,\n"
      "      channel_handle = #stablehlo.channel_handle<handle = 2, type = 0>}\n"
      "    : (tensor<2x4xi64>) -> tensor<4x2xi64>\n"
      "  return %r : tensor<4x2xi64>\n"
      "}\n";
  int64_t in[4][2][4], out[4][4][2];
  for (int p = 0; p < 4; p++)
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 4; c++) in[p][r][c] = 1000 * p + 10 * r + c;
  tc_run1(src, 2, 2, in, sizeof in[0], out, sizeof out[0]);
  for (int p = 0; p < 4; p++) {
    int rep = p / 2, part = p % 2;
    int me = part == 1 ? 0 : 1; /* index in the group [1, 0] */
    for (int k = 0; k < 2; k++) { /* sender k of the group */
      int sender = rep * 2 + (k == 0 ? 1 : 0);
      for (int r = 0; r < 2; r++)
        for (int c = 0; c < 2; c++)
          assert_true(out[p][k * 2 + r][c] == in[sender][r][me * 2 + c]);
    }
  }
}

/* ---- collective_permute, collective_broadcast, ids ---- */

static void test_collective_permute_and_broadcast(void **state) {
  (void)state;
  const char *src =
      "func.func @main(%a: tensor<3xf64>, %b: tensor<2xui8>)"
      " -> (tensor<3xf64>, tensor<2xui8>, tensor<ui32>) {\n"
      "  %r = \"stablehlo.collective_permute\"(%a) {\n"
      "      source_target_pairs = dense<[[0, 1], [1, 2], [2, 0]]>"
      " : tensor<3x2xi64>}\n"
      "    : (tensor<3xf64>) -> tensor<3xf64>\n"
      "  %q = \"stablehlo.collective_broadcast\"(%b) {\n"
      "      replica_groups = dense<[[2, 1]]> : tensor<1x2xi64>}\n"
      "    : (tensor<2xui8>) -> tensor<2xui8>\n"
      "  %i = stablehlo.replica_id : tensor<ui32>\n"
      "  return %r, %q, %i : tensor<3xf64>, tensor<2xui8>, tensor<ui32>\n"
      "}\n";
  double a[4][3], oa[4][3];
  uint8_t b[4][2], ob[4][2];
  uint32_t id[4];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, src, 4, 1);
  tc_in(L, sizeof a[0]);
  tc_out(L, sizeof a[0]);
  tc_in(L, sizeof b[0]);
  tc_out(L, sizeof b[0]);
  tc_out(L, sizeof id[0]);
  for (int p = 0; p < 4; p++) {
    for (int i = 0; i < 3; i++) a[p][i] = p * 1.25 + i;
    b[p][0] = (uint8_t)(200 + p), b[p][1] = (uint8_t)(p * 3);
    L->in[p][0] = a[p], L->in[p][1] = b[p];
    L->out[p][0] = oa[p], L->out[p][1] = ob[p], L->out[p][2] = &id[p];
  }
  tc_run_ok(L);
  static const int src_of[4] = {2, 0, 1, -1};
  for (int p = 0; p < 4; p++) {
    for (int i = 0; i < 3; i++)
      assert_true(oa[p][i] == (src_of[p] < 0 ? 0.0 : a[src_of[p]][i]));
    int in_group = p == 1 || p == 2;
    for (int i = 0; i < 2; i++)
      assert_int_equal(ob[p][i], in_group ? b[2][i] : 0);
    assert_int_equal(id[p], (uint32_t)p);
  }
  tc_end(&f);
}

/* replica_id and partition_id of every participant of 3 x 2. */
static void test_replica_and_partition_ids(void **state) {
  (void)state;
  const char *src =
      "func.func @main() -> (tensor<ui32>, tensor<ui32>) {\n"
      "  %r = stablehlo.replica_id : tensor<ui32>\n"
      "  %p = stablehlo.partition_id : tensor<ui32>\n"
      "  return %r, %p : tensor<ui32>, tensor<ui32>\n"
      "}\n";
  uint32_t r[6], pt[6];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, src, 3, 2);
  tc_out(L, sizeof(uint32_t));
  tc_out(L, sizeof(uint32_t));
  for (int p = 0; p < 6; p++) L->out[p][0] = &r[p], L->out[p][1] = &pt[p];
  tc_run_ok(L);
  for (int p = 0; p < 6; p++) {
    assert_int_equal(r[p], (uint32_t)(p / 2));
    assert_int_equal(pt[p], (uint32_t)(p % 2));
  }
  tc_end(&f);
}

/* ---- send / recv between devices ---- */

static const char *tc_send_src =
    "func.func @main(%a: tensor<3xi32>) -> tensor<3xi32> {\n"
    "  %t = stablehlo.after_all : !stablehlo.token\n"
    "  %s = \"stablehlo.send\"(%a, %t) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>}\n"
    "    : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token\n"
    "  %b = stablehlo.add %a, %a : tensor<3xi32>\n"
    "  %s2 = \"stablehlo.send\"(%b, %s) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>}\n"
    "    : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token\n"
    "  return %a : tensor<3xi32>\n"
    "}\n";
static const char *tc_recv_src =
    "func.func @main(%a: tensor<3xi32>) -> tensor<3xi32> {\n"
    "  %t = stablehlo.after_all : !stablehlo.token\n"
    "  %r:2 = \"stablehlo.recv\"(%t) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>}\n"
    "    : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)\n"
    "  %q:2 = \"stablehlo.recv\"(%r#1) {\n"
    "      channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>}\n"
    "    : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)\n"
    "  %d = stablehlo.subtract %q#0, %r#0 : tensor<3xi32>\n"
    "  return %d : tensor<3xi32>\n"
    "}\n";

/* Two programs in one launch: the second receives, in order, what the
 * first sent (FIFO per channel). */
static void test_send_recv_between_devices(void **state) {
  (void)state;
  int32_t in[2][3] = {{5, -6, 7}, {0, 0, 0}}, out[2][3];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, tc_send_src, 2, 1);
  tc_exe xr = tc_compile_ok(&f.env, tc_recv_src, 2, 1);
  tc_in(L, sizeof in[0]);
  tc_out(L, sizeof in[0]);
  L->exe[1] = xr.exe;
  for (int p = 0; p < 2; p++) L->in[p][0] = in[p], L->out[p][0] = out[p];
  tc_run_ok(L);
  for (int i = 0; i < 3; i++) /* second message 2a minus first a */
    assert_int_equal(out[1][i], in[0][i]);
  /* a recv nobody sends to fails instead of waiting forever */
  L->exe[0] = xr.exe;
  tc_run(L);
  for (int p = 0; p < 2; p++) {
    assert_int_not_equal(L->st[p], XRT_OK);
    assert_non_null(strstr(L->msg[p], "recv"));
  }
  tc_exe_free(&f.env, &xr);
  tc_end(&f);
}

/* ---- failures ---- */

static const char *tc_faulty_src =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %b = stablehlo.add %a, %a : tensor<4xf32>\n"
    "  %c = stablehlo.multiply %b, %a : tensor<4xf32>\n"
    "  %r = \"stablehlo.all_reduce\"(%c) ({\n"
    TC_REDUCER("add", "f32")
    "  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}\n"
    "    : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %r : tensor<4xf32>\n"
    "}\n";

/* A fault injected on device 2 fails it before the all_reduce; its peers
 * are released with an error naming it.  The fault is one-shot: the next
 * launch succeeds. */
static void test_fault_releases_peers(void **state) {
  (void)state;
  float in[4][4], out[4][4];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, tc_faulty_src, 4, 1);
  const xrt_plugin_api *api = f.env.api;
  xrt_plugin_error err;
  assert_non_null(api->inject_fault);
  assert_int_equal(api->inject_fault(f.env.client, 2, 1, &err), XRT_OK);
  assert_int_not_equal(api->inject_fault(f.env.client, 9, 1, &err), XRT_OK);
  assert_int_equal(api->inject_fault(f.env.client, 0, -1, &err),
                   XRT_INVALID_ARGUMENT);
  tc_in(L, sizeof in[0]);
  tc_out(L, sizeof in[0]);
  for (int p = 0; p < 4; p++) {
    for (int i = 0; i < 4; i++) in[p][i] = (float)(p + i);
    L->in[p][0] = in[p], L->out[p][0] = out[p];
  }
  tc_run(L);
  assert_int_equal(L->st[2], XRT_INTERNAL);
  assert_non_null(strstr(L->msg[2], "device 2: injected fault after 1 steps "
                                   "of @main"));
  for (int p = 0; p < 4; p++) {
    if (p == 2) continue;
    assert_int_equal(L->st[p], XRT_ABORTED);
    assert_non_null(strstr(L->msg[p], "all_reduce at <input>:4:"));
    assert_non_null(strstr(L->msg[p], "participant (replica 2, partition 0) "
                                     "on device 2 failed: device 2: "
                                     "injected fault"));
  }
  tc_run_ok(L);
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < 4; i++) {
      float want = 0;
      for (int q = 0; q < 4; q++) want += (in[q][i] + in[q][i]) * in[q][i];
      assert_true(out[p][i] == want);
    }
  tc_end(&f);
}

/* A participant the core cannot run (abort_message) fails the launch; one
 * that runs a program without the collective fails its peers too. */
static void test_abort_and_missing_participant(void **state) {
  (void)state;
  float in[4] = {1, 2, 3, 4}, out[4][4];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, tc_faulty_src, 4, 1);
  tc_exe plain = tc_compile_ok(
      &f.env,
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  return %a : tensor<4xf32>\n}\n", 4, 1);
  tc_in(L, sizeof in);
  tc_out(L, sizeof in);
  for (int p = 0; p < 4; p++) L->in[p][0] = in, L->out[p][0] = out[p];
  L->abort_msg[3] = "input 0 failed: out of memory";
  tc_run(L);
  for (int p = 0; p < 3; p++) {
    assert_int_equal(L->st[p], XRT_ABORTED);
    assert_non_null(strstr(L->msg[p], "participant (replica 3, partition 0) "
                                     "on device 3 failed: input 0 failed"));
  }
  L->abort_msg[3] = NULL;
  L->exe[1] = plain.exe;
  tc_run(L);
  assert_int_equal(L->st[1], XRT_OK);
  for (int p = 0; p < 4; p++) {
    if (p == 1) continue;
    assert_int_not_equal(L->st[p], XRT_OK);
    assert_non_null(strstr(L->msg[p], "(replica 1, partition 0)"));
  }
  tc_exe_free(&f.env, &plain);
  tc_end(&f);
}

/* Participants in different collectives fail rather than mix data. */
static void test_mismatched_collectives(void **state) {
  (void)state;
  const char *gather =
      "func.func @main(%a: tensor<4xf32>) -> tensor<8xf32> {\n"
      "  %r = \"stablehlo.all_gather\"(%a) {all_gather_dim = 0 : i64,\n"
      "      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}\n"
      "    : (tensor<4xf32>) -> tensor<8xf32>\n"
      "  return %r : tensor<8xf32>\n"
      "}\n";
  const char *reduce =
      "func.func @main(%a: tensor<4xf32>) -> tensor<8xf32> {\n"
      "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
      TC_REDUCER("add", "f32")
      "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}\n"
      "    : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  %c = stablehlo.concatenate %r, %r, dim = 0 : (tensor<4xf32>, "
      "tensor<4xf32>) -> tensor<8xf32>\n"
      "  return %c : tensor<8xf32>\n"
      "}\n";
  float in[4] = {1, 2, 3, 4}, out[2][8];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, gather, 2, 1);
  tc_exe y = tc_compile_ok(&f.env, reduce, 2, 1);
  tc_in(L, sizeof in);
  tc_out(L, sizeof out[0]);
  L->exe[1] = y.exe;
  for (int p = 0; p < 2; p++) L->in[p][0] = in, L->out[p][0] = out[p];
  tc_run(L);
  for (int p = 0; p < 2; p++) {
    assert_int_not_equal(L->st[p], XRT_OK);
    assert_non_null(strstr(L->msg[p], "different collective"));
  }
  tc_exe_free(&f.env, &y);
  tc_end(&f);
}

/* ---- compile-time validation ---- */

static void tc_expect_compile_error(const char *op_attrs, int nrep, int npart,
                                    const char *want) {
  tc_env env = tc_open(1);
  tc_exe x;
  char src[2048], msg[1024] = "";
  snprintf(src, sizeof src,
           "func.func @main(%%a: tensor<4xf32>) -> tensor<%s> {\n"
           "  %%r = %s\n"
           "  return %%r : tensor<%s>\n"
           "}\n",
           strstr(op_attrs, "all_gather") ? "8xf32" : "4xf32", op_attrs,
           strstr(op_attrs, "all_gather") ? "8xf32" : "4xf32");
  xrt_status s = tc_compile(&env, src, nrep, npart, &x, msg);
  if (s == XRT_OK) tc_exe_free(&env, &x);
  if (s != XRT_INVALID_ARGUMENT || !strstr(msg, want))
    fail_msg("status %d, message '%s', wanted '%s'", (int)s, msg, want);
  assert_non_null(strstr(msg, "<input>:2:"));
  tc_close(&env);
}

#define TC_AR(groups)                                                        \
  "\"stablehlo.all_reduce\"(%a) ({\n" TC_REDUCER("add", "f32")               \
  "  }) {replica_groups = " groups "} : (tensor<4xf32>) -> tensor<4xf32>"

static void test_invalid_groups_rejected(void **state) {
  (void)state;
  tc_expect_compile_error(TC_AR("dense<[[0, 2]]> : tensor<1x2xi64>"), 2, 1,
                          "id 2 in replica_groups is out of range");
  tc_expect_compile_error(TC_AR("dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>"),
                          2, 1, "id 1 appears twice");
  tc_expect_compile_error(TC_AR("dense<[[0, 1]]> : tensor<1x2xi64>"), 3, 1,
                          "leaves id 2 out");
  tc_expect_compile_error(TC_AR("dense<[[-3, 1]]> : tensor<1x2xi64>"), 2, 1,
                          "id -3");
  /* flattened ids range over every process */
  tc_expect_compile_error(
      "\"stablehlo.all_reduce\"(%a) ({\n"
      TC_REDUCER("add", "f32")
      "  }) {replica_groups = dense<[[0, 1, 2, 4]]> : tensor<1x4xi64>,"
      " use_global_device_ids,"
      " channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>}"
      " : (tensor<4xf32>) -> tensor<4xf32>",
      2, 2, "id 4 in replica_groups is out of range: flattened_ids over 4");
  tc_expect_compile_error(
      "\"stablehlo.all_gather\"(%a) {all_gather_dim = 0 : i64,"
      " replica_groups = dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>}"
      " : (tensor<4xf32>) -> tensor<8xf32>",
      3, 1, "same size");
  tc_expect_compile_error(
      "\"stablehlo.collective_permute\"(%a) {source_target_pairs ="
      " dense<[[0, 1], [2, 1]]> : tensor<2x2xi64>}"
      " : (tensor<4xf32>) -> tensor<4xf32>",
      3, 1, "id 1 appears twice in source_target_pairs as a target");
  tc_expect_compile_error(
      "\"stablehlo.collective_broadcast\"(%a) {replica_groups ="
      " dense<[[0, 5]]> : tensor<1x2xi64>, channel_handle ="
      " #stablehlo.channel_handle<handle = 1, type = 0>}"
      " : (tensor<4xf32>) -> tensor<4xf32>",
      1, 4, "cross_partition over 4 partitions");
  /* malformed attributes are errors, not crashes */
  tc_expect_compile_error(TC_AR("\"0, 1\""), 2, 1,
                          "replica_groups must be a 2-dimensional");
  tc_expect_compile_error(
      "\"stablehlo.collective_permute\"(%a) {source_target_pairs ="
      " dense<[[0, 1, 1]]> : tensor<1x3xi64>}"
      " : (tensor<4xf32>) -> tensor<4xf32>",
      2, 1, "Nx2");
  tc_expect_compile_error(
      "\"stablehlo.all_to_all\"(%a) {split_dimension = 0 : i64,"
      " concat_dimension = 0 : i64, split_count = 3 : i64,"
      " replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}"
      " : (tensor<4xf32>) -> tensor<4xf32>",
      2, 1, "split_count 3 must equal the group size 2");
  tc_expect_compile_error(
      "\"stablehlo.all_to_all\"(%a) {split_dimension = 3 : i64,"
      " concat_dimension = 0 : i64, split_count = 2 : i64,"
      " replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}"
      " : (tensor<4xf32>) -> tensor<4xf32>",
      2, 1, "split_dimension = 3 is not a dimension");
}

/* An executable with collectives runs only in the launch shape it was
 * compiled for. */
static void test_wrong_launch_shape(void **state) {
  (void)state;
  float in[4] = {1, 2, 3, 4}, out[2][4];
  tc_fixture f;
  tc_launch *L = tc_begin(&f, tc_faulty_src, 4, 1);
  L->nrep = 2; /* fewer replicas than it was compiled for */
  tc_in(L, sizeof in);
  tc_out(L, sizeof in);
  for (int p = 0; p < 2; p++) L->in[p][0] = in, L->out[p][0] = out[p];
  tc_run(L);
  for (int p = 0; p < 2; p++) {
    assert_int_equal(L->st[p], XRT_INVALID_ARGUMENT);
    assert_non_null(strstr(L->msg[p], "compiled for 4 replica(s)"));
  }
  tc_end(&f);
}


/* ---- through the public API ---- */

/* xrt_execute_multi runs an all_reduce + all_gather program on 2 replicas
 * x 2 partitions; then a fault injected on one device fails the launch
 * with a message naming it, and the next launch works again. */
static void test_public_execute_multi(void **state) {
  (void)state;
  xrt_client *c = tu_client(4, 0, (uint64_t)1 << 28);
  const char *src =
      "module @m attributes {mhlo.num_replicas = 2 : i32,"
      " mhlo.num_partitions = 2 : i32} {\n"
      "func.func @main(%a: tensor<2xi32>) -> (tensor<2xi32>, tensor<8xi32>) {\n"
      "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
      TC_REDUCER("add", "i32")
      "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}\n"
      "    : (tensor<2xi32>) -> tensor<2xi32>\n"
      "  %g = \"stablehlo.all_gather\"(%a) {all_gather_dim = 0 : i64,\n"
      "      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,\n"
      "      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>}\n"
      "    : (tensor<2xi32>) -> tensor<8xi32>\n"
      "  return %r, %g : tensor<2xi32>, tensor<8xi32>\n"
      "}\n}\n";
  xrt_executable *e = tu_compile(c, src, 0, NULL);
  assert_int_equal(xrt_executable_num_replicas(e), 2);
  assert_int_equal(xrt_executable_num_partitions(e), 2);
  int32_t in[4][2];
  xrt_shape sh = TU_SHAPE(XRT_S32, 2);
  xrt_buffer *args[4][1], *outs[4][2];
  for (int p = 0; p < 4; p++) {
    in[p][0] = 10 * p + 1, in[p][1] = -(p + 1);
    assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, p), &sh,
                                          in[p], &args[p][0]), XRT_OK);
  }
  xrt_buffer *const *lists[4] = {args[0], args[1], args[2], args[3]};
  xrt_buffer **olists[4] = {outs[0], outs[1], outs[2], outs[3]};
  for (int round = 0; round < 3; round++) {
    if (round == 1)
      assert_int_equal(xrt_device_inject_fault(xrt_client_device(c, 3), 0),
                       XRT_OK);
    memset(outs, 0, sizeof outs);
    xrt_event *done = NULL;
    assert_int_equal(xrt_execute_multi(e, lists, 4, 1, olists, 2, NULL, &done),
                     XRT_OK);
    xrt_status s = xrt_event_await(done);
    if (round == 1) {
      assert_int_not_equal(s, XRT_OK);
      tu_save_error();
      assert_non_null(strstr(tu_msg, "device 3"));
    } else {
      if (s != XRT_OK) fail_msg("%s", xrt_last_error());
      for (int p = 0; p < 4; p++) {
        int part = p % 2, other = (1 - p / 2) * 2 + part;
        int32_t r[2], g[8];
        assert_int_equal(xrt_buffer_to_host(outs[p][0], r, sizeof r), XRT_OK);
        assert_int_equal(xrt_buffer_to_host(outs[p][1], g, sizeof g), XRT_OK);
        for (int i = 0; i < 2; i++) assert_int_equal(r[i], in[p][i] + in[other][i]);
        /* cross_replica_and_partition: one group (0,0),(1,0),(0,1),(1,1) */
        static const int order[4] = {0, 2, 1, 3};
        for (int k = 0; k < 8; k++)
          assert_int_equal(g[k], in[order[k / 2]][k % 2]);
      }
    }
    for (int p = 0; p < 4; p++)
      for (int j = 0; j < 2; j++) xrt_buffer_release(outs[p][j]);
    xrt_event_release(done);
  }
  xrt_client_release(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_reduce_cross_replica_groups),
      cmocka_unit_test(test_all_reduce_cross_replica_and_partition),
      cmocka_unit_test(test_all_reduce_flattened_ids_variadic),
      cmocka_unit_test(test_all_reduce_region_f64_and_pred),
      cmocka_unit_test(test_all_reduce_big_8),
      cmocka_unit_test(test_all_gather_partitions),
      cmocka_unit_test(test_reduce_scatter_i32),
      cmocka_unit_test(test_all_to_all_cross_partition),
      cmocka_unit_test(test_collective_permute_and_broadcast),
      cmocka_unit_test(test_replica_and_partition_ids),
      cmocka_unit_test(test_send_recv_between_devices),
      cmocka_unit_test(test_fault_releases_peers),
      cmocka_unit_test(test_abort_and_missing_participant),
      cmocka_unit_test(test_mismatched_collectives),
      cmocka_unit_test(test_invalid_groups_rejected),
      cmocka_unit_test(test_wrong_launch_shape),
      cmocka_unit_test(test_public_execute_multi),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
