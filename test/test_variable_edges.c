/*
 * test_variable_edges.c - the edges of variable save/load and
 * xrt_execute_variables that test_variables.c leaves out: every way a
 * save can fail to place its file (a missing directory, a file where a
 * directory should be, a directory in the way of the rename; each must
 * leave no temporary file behind), host memory running out at each
 * allocation of a save and of a load (the variable keeps its values), and
 * the argument checks of xrt_execute_variables and
 * xrt_variable_create_from_npy; reshards of more variables than a call
 * keeps on the stack (traced: one event each), of a 4 MiB variable (copied
 * on several threads), and the checks of updates (two outputs updating one
 * variable, indices that are no variable, an output of another shape).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "test_util.h"

static char dir[512];

static int setup(void **state) {
  (void)state;
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/xrt_var_edges_XXXXXX", t && *t ? t : "/tmp");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  remove(dir);
  return 0;
}

/* A [3][2] f32 variable replicated on the client's first two devices,
 * x[i][j] = 10 i + j + base. */
static xrt_variable *make_var(xrt_client *c, float base) {
  float x[6];
  for (int i = 0; i < 6; i++) x[i] = (float)(10 * (i / 2) + i % 2) + base;
  xrt_sharding_spec s = tu_spec_replicated(2, 2);
  xrt_device *devs[2] = {xrt_client_device(c, 0), xrt_client_device(c, 1)};
  xrt_variable_format f = {&s, devs, 2};
  xrt_shape sh = TU_SHAPE(XRT_F32, 3, 2);
  xrt_variable *v = NULL;
  if (xrt_variable_create(c, "v", &sh, x, &f, &v) != XRT_OK)
    fail_msg("create: %s", xrt_last_error());
  return v;
}

static void assert_values(xrt_variable *v, float base) {
  float got[6];
  assert_int_equal(xrt_variable_to_host(v, got, sizeof got), XRT_OK);
  for (int i = 0; i < 6; i++)
    assert_true(got[i] == (float)(10 * (i / 2) + i % 2) + base);
}

/* Whether a file can be opened. */
static bool exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

static void test_save_placement_errors(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 0, 0);
  xrt_variable *v = make_var(c, 0.5f);
  assert_int_equal(xrt_variable_save(v, NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "path is NULL");
  assert_int_equal(xrt_variable_load(v, NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "path is NULL");
  char p[700];
  /* a missing directory */
  snprintf(p, sizeof p, "%s/none/v.npy", dir);
  assert_int_equal(xrt_variable_save(v, p), XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "cannot create a temporary file beside it");
#if !defined(_WIN32)
  /* a file where the directory should be */
  char file[600];
  snprintf(file, sizeof file, "%s/file", dir);
  tu_write_file(file, "x", 1);
  snprintf(p, sizeof p, "%s/v.npy", file);
  assert_int_equal(xrt_variable_save(v, p), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "cannot create a temporary file beside it");
  remove(file);
  /* a directory (not empty) in the way of the rename: the temporary file
   * is removed */
  char sub[600], inner[700];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  assert_int_equal(mkdir(sub, 0777), 0);
  snprintf(inner, sizeof inner, "%s/in", sub);
  tu_write_file(inner, "i", 1);
  assert_int_equal(xrt_variable_save(v, sub), XRT_DATA_LOSS);
  TU_ASSERT_CONTAINS(xrt_last_error(), "cannot rename");
  TU_ASSERT_CONTAINS(xrt_last_error(), ".tmp");
  remove(inner);
  remove(sub);
#endif
  /* and a good one, loaded back into a variable holding other values */
  snprintf(p, sizeof p, "%s/good.npy", dir);
  assert_int_equal(xrt_variable_save(v, p), XRT_OK);
  xrt_variable *w = make_var(c, 100.0f);
  assert_int_equal(xrt_variable_load(w, p), XRT_OK);
  assert_values(w, 0.5f);
  /* create_from_npy's argument checks */
  xrt_variable *z = (xrt_variable *)&z;
  assert_int_equal(xrt_variable_create_from_npy(c, "z", p, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "out_variable is NULL");
  assert_int_equal(xrt_variable_create_from_npy(NULL, "z", p, NULL, &z),
                   XRT_INVALID_ARGUMENT);
  assert_null(z);
  TU_ASSERT_CONTAINS(xrt_last_error(), "invalid client");
  assert_int_equal(xrt_variable_create_from_npy(c, "z", NULL, NULL, &z),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "path is NULL");
  remove(p);
  assert_false(exists(p));
  xrt_variable_release(w);
  xrt_variable_release(v);
  xrt_client_release(c);
}

/* Every allocation of a save, then of a load, failing in turn: each
 * failure is RESOURCE_EXHAUSTED or leaves the call successful (an
 * allocation whose failure is absorbed), the variable keeps its values,
 * and nothing leaks (checked once the client is gone: device threads free
 * some blocks after a call returns). */
static void test_save_load_out_of_memory(void **state) {
  (void)state;
  tu_counting_alloc a;
  xrt_client *c = tu_client_counted(2, &a);
  xrt_variable *v = make_var(c, 1.0f);
  char p[700];
  snprintf(p, sizeof p, "%s/oom.npy", dir);
  int failures = 0;
  for (long k = 1; k < 200; k++) {
    tu_counting_arm(&a, k);
    xrt_status st = xrt_variable_save(v, p);
    bool injected = tu_counting_disarm(&a);
    if (!injected) {
      assert_int_equal(st, XRT_OK);
      break;
    }
    if (st != XRT_OK) {
      assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
      TU_ASSERT_CONTAINS(xrt_last_error(), "out of host memory");
      failures++;
    }
  }
  assert_true(failures >= 2); /* the host copy and the temporary name */
  assert_values(v, 1.0f);
  /* the same for loads of the file into a variable holding 7.0 + ... */
  xrt_variable *w = make_var(c, 7.0f);
  failures = 0;
  for (long k = 1; k < 400; k++) {
    tu_counting_arm(&a, k);
    xrt_status st = xrt_variable_load(w, p);
    bool injected = tu_counting_disarm(&a);
    if (!injected) {
      assert_int_equal(st, XRT_OK);
      break;
    }
    if (st != XRT_OK) {
      assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
      assert_values(w, 7.0f); /* unchanged */
      failures++;
    }
  }
  assert_true(failures >= 1);
  assert_values(w, 1.0f);
  remove(p);
  xrt_variable_release(w);
  xrt_variable_release(v);
  xrt_client_release(c);
  assert_int_equal(atomic_load(&a.live), 0);
}

static void test_execute_variables_args(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 0, 0);
  xrt_variable *v = make_var(c, 0.0f);
  xrt_executable *e = tu_compile(
      c, "func.func @main(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {\n"
         "  %0 = stablehlo.add %a, %a : tensor<3x2xf32>\n"
         "  func.return %0 : tensor<3x2xf32>\n}\n", 2, NULL);
  xrt_variable_arg args[65];
  memset(args, 0, sizeof args);
  for (int i = 0; i < 65; i++) args[i].variable = v;
  xrt_sharded_array *outs[2] = {(xrt_sharded_array *)&outs,
                                (xrt_sharded_array *)&outs};
  static const struct {
    int nargs, nouts;
    bool null_args, null_outs;
    const char *msg;
  } bad[] = {
      {1, 1, false, true, "outputs is NULL"},
      {-1, 1, false, false, "bad argument or output count"},
      {1, -1, false, false, "bad argument or output count"},
      {1, 257, false, true, "outputs is NULL"},
      {1, 1, true, false, "args is NULL"},
      /* no cap on the count: 65 reach the executable's own check */
      {65, 1, false, false, "takes 1 argument(s), got 65"},
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    xrt_status st = xrt_execute_variables(
        e, bad[i].null_args ? NULL : args, bad[i].nargs, NULL,
        bad[i].null_outs ? NULL : outs, bad[i].nouts, NULL);
    if (st != XRT_INVALID_ARGUMENT)
      fail_msg("case %zu: %s", i, xrt_strerror(st));
    TU_ASSERT_CONTAINS(xrt_last_error(), bad[i].msg);
  }
  xrt_sharded_array *many[257];
  assert_int_equal(xrt_execute_variables(e, args, 1, NULL, many, 257, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "returns 1 result(s), room for 257");
  assert_int_equal(xrt_execute_variables(NULL, args, 1, NULL, outs, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "invalid or released executable");
  assert_null(outs[0]); /* outputs are cleared first */
  /* zero arguments and outputs, NULL lists: the executable wants one */
  assert_int_not_equal(xrt_execute_variables(e, NULL, 0, NULL, NULL, 0, NULL),
                       XRT_OK);
  /* a good call: 2 x */
  if (xrt_execute_variables(e, args, 1, NULL, outs, 1, NULL) != XRT_OK)
    fail_msg("%s", xrt_last_error());
  /* the two replicas' results, stacked */
  float got[12];
  if (xrt_sharded_array_to_host(outs[0], got, sizeof got) != XRT_OK)
    fail_msg("%s", xrt_last_error());
  for (int i = 0; i < 12; i++)
    assert_true(got[i] == 2.0f * (float)(10 * (i % 6 / 2) + i % 2));
  xrt_sharded_array_release(outs[0]);
  xrt_executable_release(e);
  xrt_variable_release(v);
  xrt_client_release(c);
}


/* The chunked format of make_var's arrays: dim 0 cut in 3 is not possible
 * on 2 devices, so dim 1 (2 columns) is cut in 2. */
static xrt_variable_format chunked_fmt(xrt_client *c, xrt_sharding_spec *s,
                                       xrt_device **devs) {
  xrt_sharding_spec_init(s, 2);
  s->dims[1].kind = XRT_DIM_CHUNKED;
  s->dims[1].num_chunks = 1;
  s->dims[1].chunks[0] = 2;
  s->num_mesh_dims = 1;
  s->mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  s->mesh[0].axis = 0;
  devs[0] = xrt_client_device(c, 1);
  devs[1] = xrt_client_device(c, 0);
  xrt_variable_format f = {s, devs, 2};
  return f;
}

/* Six variables at once (more than the four a call keeps on the stack),
 * while a trace is recorded: every variable moves, keeps its values, and
 * the trace has one "reshard" event per variable, named after it.  Then
 * the checks of a call of many: a repeated variable, a released first
 * variable, a count of 0 or below, NULL lists. */
static void test_reshard_many_traced(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 0, 0);
  enum { NV = 6 };
  xrt_variable *vs[NV];
  xrt_sharding_spec s;
  xrt_device *devs[2];
  xrt_variable_format f = chunked_fmt(c, &s, devs);
  xrt_variable_format fs[NV];
  for (int i = 0; i < NV; i++) {
    vs[i] = make_var(c, (float)(100 * i));
    fs[i] = f;
  }
  char path[700];
  snprintf(path, sizeof path, "%s/trace.json", dir);
  assert_int_equal(xrt_trace_start(path), XRT_OK);
  assert_int_equal(xrt_variables_reshard(vs, fs, NV, NULL), XRT_OK);
  assert_int_equal(xrt_trace_stop(), XRT_OK);
  for (int i = 0; i < NV; i++) {
    assert_values(vs[i], (float)(100 * i));
    assert_int_equal(xrt_variable_num_devices(vs[i]), 2);
    assert_ptr_equal(xrt_variable_device(vs[i], 0), devs[0]);
  }
  size_t n;
  char *text = tu_read_file(path, &n);
  int events = 0;
  for (const char *q = text; (q = strstr(q, "\"cat\":\"reshard\"")); q++)
    events++;
  assert_int_equal(events, NV);
  assert_non_null(strstr(text, "\"name\":\"v\""));
  free(text);
  remove(path);
  /* all in the target format already: nothing moves */
  assert_int_equal(xrt_variables_reshard(vs, fs, NV, NULL), XRT_OK);
  /* a variable twice in a call of six */
  xrt_variable *dup[NV];
  memcpy(dup, vs, sizeof dup);
  dup[5] = vs[1];
  assert_int_equal(xrt_variables_reshard(dup, fs, NV, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "variables[1] and variables[5] are "
                                       "the same variable");
  /* counts and lists */
  assert_int_equal(xrt_variables_reshard(vs, fs, 0, NULL), XRT_OK);
  assert_int_equal(xrt_variables_reshard(NULL, NULL, 0, NULL), XRT_OK);
  assert_int_equal(xrt_variables_reshard(vs, fs, -1, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "count is negative");
  assert_int_equal(xrt_variables_reshard(vs, NULL, 2, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "variables or formats is NULL");
  xrt_reshard_options ro;
  xrt_reshard_options_init(&ro);
  xrt_reshard_options_init(NULL);
  assert_int_equal(xrt_variables_reshard(vs, fs, NV, &ro), XRT_OK);
  /* the first variable released: refused before anything is taken */
  xrt_variable *gone = make_var(c, 0.0f);
  xrt_variable_release(gone);
  xrt_variable *withgone[NV];
  memcpy(withgone, vs, sizeof withgone);
  withgone[0] = gone;
  assert_int_equal(xrt_variables_reshard(withgone, fs, NV, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "variables[0] is not a live variable");
  withgone[0] = vs[0];
  withgone[3] = gone;
  assert_int_equal(xrt_variables_reshard(withgone, fs, NV, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "variables[3] is not a live variable");
  for (int i = 0; i < NV; i++) {
    assert_values(vs[i], (float)(100 * i));
    xrt_variable_release(vs[i]);
  }
  xrt_client_release(c);
}

/* A variable of 4 MiB: its reshard copies on several threads (on a
 * machine of more than one core); every element arrives. */
static void test_reshard_large(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 0, (uint64_t)64 << 20);
  enum { ROWS = 1024, COLS = 1024 };
  float *x = (float *)malloc(sizeof(float) * ROWS * COLS);
  float *back = (float *)malloc(sizeof(float) * ROWS * COLS);
  assert_non_null(x);
  assert_non_null(back);
  for (int i = 0; i < ROWS * COLS; i++) x[i] = (float)(i % 65521) - 7.0f;
  xrt_sharding_spec rep = tu_spec_replicated(2, 2);
  xrt_device *devs[2] = {xrt_client_device(c, 0), xrt_client_device(c, 1)};
  xrt_variable_format f = {&rep, devs, 2};
  xrt_shape sh = TU_SHAPE(XRT_F32, ROWS, COLS);
  xrt_variable *v = NULL;
  assert_int_equal(xrt_variable_create(c, "big", &sh, x, &f, &v), XRT_OK);
  /* rows cut in 2, on the devices in the other order */
  xrt_sharding_spec ch = tu_spec_chunked(2, 0, 2);
  xrt_device *rdevs[2] = {devs[1], devs[0]};
  xrt_variable_format g = {&ch, rdevs, 2};
  assert_int_equal(xrt_variables_reshard(&v, &g, 1, NULL), XRT_OK);
  /* and back, columns cut this time */
  ch.dims[0].kind = XRT_DIM_NO_SHARDING;
  ch.dims[1].kind = XRT_DIM_CHUNKED;
  ch.dims[1].num_chunks = 1;
  ch.dims[1].chunks[0] = 2;
  assert_int_equal(xrt_variables_reshard(&v, &g, 1, NULL), XRT_OK);
  assert_int_equal(xrt_variable_to_host(v, back, sizeof(float) * ROWS * COLS),
                   XRT_OK);
  assert_memory_equal(back, x, sizeof(float) * ROWS * COLS);
  xrt_variable_release(v);
  free(x);
  free(back);
  xrt_client_release(c);
}


/* Host memory running out at each allocation of a reshard of six
 * variables (scratch on the heap): each failure is RESOURCE_EXHAUSTED and
 * leaves every variable in its old format with its values; nothing
 * leaks. */
static void test_reshard_out_of_memory(void **state) {
  (void)state;
  tu_counting_alloc a;
  xrt_client *c = tu_client_counted(2, &a);
  enum { NV = 6 };
  xrt_variable *vs[NV];
  xrt_sharding_spec s, rs;
  xrt_device *devs[2];
  xrt_variable_format f = chunked_fmt(c, &s, devs), fs[NV], back[NV];
  rs = tu_spec_replicated(2, 2);
  xrt_device *odevs[2] = {xrt_client_device(c, 0), xrt_client_device(c, 1)};
  for (int i = 0; i < NV; i++) {
    vs[i] = make_var(c, (float)(10 * i));
    fs[i] = f;
    back[i] = (xrt_variable_format){&rs, odevs, 2};
  }
  int failures = 0;
  for (long k = 1; k < 400; k++) {
    tu_counting_arm(&a, k);
    xrt_status st = xrt_variables_reshard(vs, fs, NV, NULL);
    bool injected = tu_counting_disarm(&a);
    if (st == XRT_OK) {
      assert_ptr_equal(xrt_variable_device(vs[0], 0), devs[0]);
      if (!injected) break;
      assert_int_equal(xrt_variables_reshard(vs, back, NV, NULL), XRT_OK);
      continue;
    }
    assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
    for (int i = 0; i < NV; i++) {
      assert_ptr_equal(xrt_variable_device(vs[i], 0), odevs[0]);
      assert_values(vs[i], (float)(10 * i));
    }
    failures++;
  }
  assert_true(failures >= 3);
  for (int i = 0; i < NV; i++) {
    assert_values(vs[i], (float)(10 * i));
    xrt_variable_release(vs[i]);
  }
  xrt_client_release(c);
  assert_int_equal(atomic_load(&a.live), 0);
}

/* Two outputs updating one variable, an update naming an array argument
 * or no argument at all, an output whose shape is not the variable's. */
static void test_execute_updates(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 0, 0);
  xrt_variable *v = make_var(c, 1.0f);
  xrt_executable *e = tu_compile(
      c, "func.func @main(%a: tensor<3x2xf32>) -> (tensor<3x2xf32>, "
         "tensor<3x2xf32>, tensor<2xf32>) {\n"
         "  %0 = stablehlo.add %a, %a : tensor<3x2xf32>\n"
         "  %1 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
         "  func.return %0, %a, %1 : tensor<3x2xf32>, tensor<3x2xf32>, "
         "tensor<2xf32>\n}\n", 2, NULL);
  xrt_variable_arg args[1] = {{v, NULL}};
  xrt_sharded_array *outs[3] = {NULL, NULL, NULL};
  static const struct {
    int updates[3];
    const char *msg;
  } bad[] = {
      {{0, 0, -1}, "outputs 0 and 1 both update variable 'v'"},
      {{1, -1, -1}, "updates[0] = 1 is not the index of a variable argument"},
      {{-2, -1, -1}, "updates[0] = -2"},
      {{-1, -1, 0}, "output 2 is tensor<2xf32> per device; the variable 'v' "
                    "(argument 0) it updates has pieces tensor<3x2xf32>"},
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    assert_int_equal(xrt_execute_variables(e, args, 1, bad[i].updates, outs,
                                           3, NULL),
                     XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(xrt_last_error(), bad[i].msg);
  }
  assert_values(v, 1.0f); /* untouched */
  /* a good update: v = 2 v, the others returned */
  static const int upd[3] = {0, -1, -1};
  assert_int_equal(xrt_execute_variables(e, args, 1, upd, outs, 3, NULL),
                   XRT_OK);
  assert_null(outs[0]);
  assert_non_null(outs[1]);
  assert_non_null(outs[2]);
  float got[6];
  assert_int_equal(xrt_variable_to_host(v, got, sizeof got), XRT_OK);
  for (int i = 0; i < 6; i++)
    assert_true(got[i] == 2.0f * ((float)(10 * (i / 2) + i % 2) + 1.0f));
  xrt_sharded_array_release(outs[1]);
  xrt_sharded_array_release(outs[2]);
  xrt_executable_release(e);
  xrt_variable_release(v);
  xrt_client_release(c);
}

TU_MAIN(setup, teardown, cmocka_unit_test(test_save_placement_errors),
        cmocka_unit_test(test_save_load_out_of_memory),
        cmocka_unit_test(test_execute_variables_args),
        cmocka_unit_test(test_reshard_many_traced),
        cmocka_unit_test(test_reshard_large),
        cmocka_unit_test(test_execute_updates),
        cmocka_unit_test(test_reshard_out_of_memory))
