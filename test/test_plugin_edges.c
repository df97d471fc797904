/*
 * test_plugin_edges.c - the plugin registry (src/core/plugin.c) on what
 * test_plugins.c and test_platform.c leave out: tables whose
 * platform_describe answers badly (versions that are not X.Y.Z, a
 * negative or missing attribute list, an unnamed attribute, a failure of
 * its own), a plugin whose StableHLO range leaves the program's version
 * out (the support report says NO for "module"), registering a table
 * twice and another table under a taken name, malformed XRT_PLUGINS
 * entries, directory scans of what is not a directory, the registry's
 * lookups with bad arguments; and the topology read from the environment
 * (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, XRT_HOST_INDEX /
 * GROUP_RANK / NODE_RANK) with every check it makes; a refused
 * XRT_PLUGINS in the default context; host memory running out while a
 * context is made and plugins are registered; op_support answers (NO and
 * MAYBE without reasons, an answer that is no xrt_support value).  The
 * tables are copies of the built-in simulator's with one field changed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <stdlib.h>

#include "test_util.h"

/* ---- platform_describe answering badly ---- */

static int describe_mode;
static const xrt_attribute one_unnamed[1] = {{.name = NULL}};

static xrt_status bad_describe(xrt_plugin_platform_desc *d,
                               xrt_plugin_error *err) {
  switch (describe_mode) {
  case 0: d->stablehlo_min = "1.x.0"; break;
  case 1: d->stablehlo_max = "1234567890.0.0"; break; /* ten digits */
  case 2: d->stablehlo_min = "1.0"; break;
  case 3: d->stablehlo_max = "1.0.0."; break;
  case 4: d->num_attributes = -1; break;
  case 5: d->num_attributes = 2; d->attributes = NULL; break;
  case 6: d->num_attributes = 1; d->attributes = one_unnamed; break;
  case 7:
    snprintf(err->message, sizeof err->message, "no platform here");
    return XRT_UNAVAILABLE;
  case 8: d->stablehlo_min = "99.0.0"; d->stablehlo_max = "99.1.0"; break;
  default: break;
  }
  return XRT_OK;
}

static xrt_plugin_api bad_table;

static void test_bad_descriptions(void **state) {
  (void)state;
  static const struct {
    xrt_status code;
    const char *msg;
  } want[] = {
      {XRT_FAILED_PRECONDITION, "gave StableHLO versions '1.x.0'..'(any)', "
                                "not X.Y.Z"},
      {XRT_FAILED_PRECONDITION, "'(any)'..'1234567890.0.0'"},
      {XRT_FAILED_PRECONDITION, "'1.0'..'(any)'"},
      {XRT_FAILED_PRECONDITION, "'(any)'..'1.0.0.'"},
      {XRT_FAILED_PRECONDITION, "platform_describe gave -1 attributes"},
      {XRT_FAILED_PRECONDITION, "platform_describe gave 2 attributes"},
      {XRT_FAILED_PRECONDITION, "platform attribute 0 has no name"},
      {XRT_UNAVAILABLE, "bad: no platform here"},
  };
  xrt_context *x = tu_context(false);
  bad_table = *xrt_sim_plugin_api();
  bad_table.platform_describe = bad_describe;
  for (size_t i = 0; i < TU_COUNT(want); i++) {
    describe_mode = (int)i;
    xrt_plugin *p = (xrt_plugin *)&p;
    xrt_status st = xrt_context_register_plugin(x, "bad", &bad_table, &p);
    if (st != want[i].code)
      fail_msg("mode %zu: %s: %s", i, xrt_strerror(st), xrt_last_error());
    TU_ASSERT_CONTAINS(xrt_last_error(), want[i].msg);
    if (want[i].code != XRT_UNAVAILABLE)
      TU_ASSERT_CONTAINS(xrt_last_error(), "plugin 'bad'");
    assert_null(p);
    assert_int_equal(xrt_context_plugin_count(x), 0);
  }
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* A plugin that accepts StableHLO 99.0.0..99.1.0 only: a program of
 * xrt's version is not supported, and the report names the module. */
static void test_version_out_of_range(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  bad_table = *xrt_sim_plugin_api();
  bad_table.platform_describe = bad_describe;
  describe_mode = 8;
  xrt_plugin *p = NULL;
  assert_int_equal(xrt_context_register_plugin(x, "future", &bad_table, &p),
                   XRT_OK);
  xrt_plugin_info info;
  assert_int_equal(xrt_plugin_get_info(p, &info), XRT_OK);
  assert_string_equal(info.stablehlo_min, "99.0.0");
  assert_string_equal(info.stablehlo_max, "99.1.0");
  assert_string_equal(info.name, "future");
  assert_string_equal(info.path, "");
  xrt_client *c = tu_client_of(x, "future", 1);
  const char *text = "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                     "  func.return %a : tensor<f32>\n}\n";
  xrt_program *prog = NULL;
  assert_int_equal(xrt_program_parse(text, strlen(text), NULL, &prog), XRT_OK);
  xrt_support_report *rep = NULL;
  assert_int_equal(xrt_client_query_support(c, prog, NULL, &rep), XRT_OK);
  assert_int_equal(xrt_support_report_verdict(rep), XRT_SUPPORT_NO);
  assert_true(xrt_support_report_count(rep) >= 1);
  const xrt_support_issue *is = xrt_support_report_issue(rep, 0);
  assert_non_null(is);
  assert_string_equal(is->op, "module");
  assert_int_equal(is->verdict, XRT_SUPPORT_NO);
  TU_ASSERT_CONTAINS(is->reason, "99.0.0");
  assert_null(xrt_support_report_issue(rep, -1));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  assert_null(xrt_support_report_issue(NULL, 0));
  assert_int_equal(xrt_last_status(), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_support_report_verdict(NULL), XRT_SUPPORT_NO);
  assert_int_equal(xrt_support_report_count(NULL), -1);
  xrt_support_report_release(rep);
  /* bad arguments of the query */
  assert_int_equal(xrt_client_query_support(c, prog, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "out_report is NULL");
  assert_int_equal(xrt_client_query_support(c, NULL, NULL, &rep),
                   XRT_INVALID_ARGUMENT);
  xrt_program_release(prog);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* Registering: the same table again is the same plugin; another table
 * under that name is refused; lookups with bad arguments. */
static void test_register_and_lookups(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
  static xrt_plugin_api t1, t2;
  t1 = *xrt_sim_plugin_api();
  t2 = t1;
  t2.version = NULL; /* reported as "" */
  xrt_plugin *p1 = NULL, *again = NULL, *p2 = NULL;
  assert_int_equal(xrt_context_register_plugin(x, "one", &t1, &p1), XRT_OK);
  assert_int_equal(xrt_context_register_plugin(x, "one", &t1, &again),
                   XRT_OK);
  assert_ptr_equal(p1, again);
  assert_int_equal(xrt_context_plugin_count(x), 1);
  assert_int_equal(xrt_context_register_plugin(x, "one", &t2, &p2),
                   XRT_ALREADY_EXISTS);
  TU_ASSERT_CONTAINS(xrt_last_error(), "'one' is already");
  assert_int_equal(xrt_context_register_plugin(x, "two", &t2, NULL), XRT_OK);
  xrt_plugin *two = xrt_context_find_plugin(x, "two");
  assert_non_null(two);
  xrt_plugin_info info;
  assert_int_equal(xrt_plugin_get_info(two, &info), XRT_OK);
  assert_string_equal(info.platform_version, "");
  assert_ptr_equal(xrt_context_plugin(x, 1), two);
  assert_null(xrt_context_plugin(x, 2));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  assert_null(xrt_context_plugin(x, -1));
  assert_null(xrt_context_plugin(NULL, 0));
  assert_int_equal(xrt_last_status(), XRT_INVALID_ARGUMENT);
  assert_null(xrt_context_find_plugin(x, NULL));
  assert_int_equal(xrt_last_status(), XRT_INVALID_ARGUMENT);
  assert_null(xrt_context_find_plugin(NULL, "one"));
  assert_int_equal(xrt_last_status(), XRT_INVALID_ARGUMENT);
  assert_null(xrt_context_find_plugin(x, "three"));
  assert_int_equal(xrt_last_status(), XRT_NOT_FOUND);
  assert_int_equal(xrt_context_plugin_count(NULL), -1);
  assert_int_equal(xrt_context_register_plugin(NULL, "x", &t1, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_context_unload_plugin(x, two), XRT_OK);
  assert_int_equal(xrt_context_unload_plugin(x, two), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_context_unload_plugin(NULL, p1), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_plugin_get_info(NULL, &info), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_plugin_get_info(p1, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* Plugin lists and directories that cannot be loaded. */
static void test_lists_and_scans(void **state) {
  (void)state;
  xrt_context *x = tu_context(false);
#if defined(_WIN32)
#define SEP ";"
#else
#define SEP ":"
#endif
  static const char *bad[] = {"noseparator", SEP "path", "name" SEP,
                              " \t" SEP "x \t", "a" SEP "b," SEP "c"};
  static const int entry[] = {1, 1, 1, 1, 1};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    xrt_status st = xrt_context_load_env(x, bad[i]);
    assert_int_not_equal(st, XRT_OK);
    char want[64];
    snprintf(want, sizeof want, "plugin list entry %d", entry[i]);
    TU_ASSERT_CONTAINS(xrt_last_error(), want);
  }
  /* empty entries are skipped; a missing file names the entry */
  assert_int_equal(xrt_context_load_env(x, " , ,\t,"), XRT_OK);
  assert_int_equal(xrt_context_load_env(x, ",m" SEP "/no/such/plugin.so"),
                   XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(xrt_last_error(), "plugin list entry 2 ('m" SEP
                                       "/no/such/plugin.so')");
  /* a very long entry is not name:path */
  char *lng = (char *)malloc(5001);
  assert_non_null(lng);
  memset(lng, 'p', 5000);
  lng[5000] = 0;
  lng[3] = SEP[0];
  assert_int_equal(xrt_context_load_env(x, lng), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "is not name");
  free(lng);
  assert_int_equal(xrt_context_load_env(NULL, "a" SEP "b"),
                   XRT_INVALID_ARGUMENT);
  /* scans */
  int n = -1;
  assert_int_equal(xrt_context_scan_directory(x, "/no/such/dir", &n),
                   XRT_NOT_FOUND);
  assert_int_equal(n, 0);
  assert_int_equal(xrt_context_scan_directory(x, "", &n),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_context_scan_directory(x, NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_context_scan_directory(NULL, ".", &n),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_context_load_plugin(x, "p", "", NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_context_load_plugin(NULL, "p", "x.so", NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_context_plugin_count(x), 0);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}


/* Host memory running out at every allocation of a context's creation
 * (the built-in plugins registered) and of two registrations (the second
 * grows the registry): each failure is RESOURCE_EXHAUSTED, and nothing
 * leaks. */
static void test_registry_out_of_memory(void **state) {
  (void)state;
  static xrt_plugin_api tables[9];
  for (int i = 0; i < 9; i++) tables[i] = *xrt_sim_plugin_api();
  int failures = 0;
  for (long k = 1; k < 200; k++) {
    tu_counting_alloc a;
    tu_counting_init(&a, k);
    xrt_context_options o;
    xrt_context_options_init(&o);
    o.env_plugins = false;
    o.allocator = tu_counting_allocator(&a);
    xrt_context *x = NULL;
    xrt_status st = xrt_context_create(&o, &x);
    for (int i = 0; st == XRT_OK && i < 9; i++) {
      char name[16];
      snprintf(name, sizeof name, "t%d", i);
      st = xrt_context_register_plugin(x, name, &tables[i], NULL);
    }
    bool injected = atomic_load(&a.failed);
    if (st != XRT_OK) {
      assert_true(injected);
      assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
      failures++;
    }
    if (x) {
      if (st == XRT_OK) assert_int_equal(xrt_context_plugin_count(x), 10);
      assert_int_equal(xrt_context_release(x), XRT_OK);
    } else {
      assert_int_not_equal(st, XRT_OK);
    }
    assert_int_equal(atomic_load(&a.live), 0);
    if (!injected) break;
  }
  assert_true(failures >= 3);
  /* an allocator without free */
  xrt_context_options o;
  xrt_context_options_init(&o);
  o.allocator.free = NULL;
  xrt_context *x = NULL;
  assert_int_equal(xrt_context_create(&o, &x), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_context_create(NULL, NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "out_context is NULL");
}


/* ---- op_support answers ---- */

static int support_mode; /* 0: NO for add, MAYBE for multiply; 1: 7 */

static int judge(void *client, const xrt_ir_module *m, int32_t func,
                 const xrt_ir_op *op, xrt_plugin_error *why) {
  (void)client, (void)m, (void)func, (void)why;
  if (support_mode == 1) return 7;
  if (op->code == XRT_OP_ADD) return XRT_SUPPORT_NO;      /* no reason */
  if (op->code == XRT_OP_MULTIPLY) return XRT_SUPPORT_MAYBE;
  return XRT_SUPPORT_YES;
}

/* A plugin that refuses add without a reason and cannot tell for
 * multiply: the report has one issue per op (in the entry and in the
 * function it calls, walked once however often it is called) with the
 * default reasons, over many issues (its list grows); an answer that is no
 * xrt_support value is an internal error naming the plugin. */
static void test_support_answers(void **state) {
  (void)state;
  static xrt_plugin_api judging;
  judging = tu_sim_table("judge");
  judging.op_support = judge;
  xrt_context *x = tu_context_with(&judging);
  xrt_client *c = tu_client_of(x, "judge", 1);
  char text[8192];
  enum { ADDS = 20 };
  int n = 0;
  n += snprintf(text + n, sizeof text - (size_t)n,
                "func.func @helper(%%a: tensor<f32>) -> tensor<f32> {\n"
                "  %%0 = stablehlo.multiply %%a, %%a : tensor<f32>\n"
                "  func.return %%0 : tensor<f32>\n}\n"
                "func.func @main(%%a: tensor<f32>) -> tensor<f32> {\n"
                "  %%s0 = func.call @helper(%%a) : (tensor<f32>) -> "
                "tensor<f32>\n"
                "  %%t0 = func.call @helper(%%s0) : (tensor<f32>) -> "
                "tensor<f32>\n");
  for (int i = 0; i < ADDS; i++)
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "  %%s%d = stablehlo.add %%s%d, %%t0 : tensor<f32>\n",
                  i + 1, i);
  snprintf(text + n, sizeof text - (size_t)n,
           "  func.return %%s%d : tensor<f32>\n}\n", ADDS);
  xrt_program *prog = NULL;
  if (xrt_program_parse(text, strlen(text), NULL, &prog) != XRT_OK)
    fail_msg("parse: %s", xrt_last_error());
  support_mode = 0;
  xrt_support_report *rep = NULL;
  assert_int_equal(xrt_client_query_support(c, prog, NULL, &rep), XRT_OK);
  assert_int_equal(xrt_support_report_verdict(rep), XRT_SUPPORT_NO);
  assert_int_equal(xrt_support_report_count(rep), ADDS + 1);
  int no = 0, maybe = 0;
  for (int i = 0; i < ADDS + 1; i++) {
    const xrt_support_issue *is = xrt_support_report_issue(rep, i);
    assert_non_null(is);
    assert_string_equal(is->file, "<input>");
    if (is->verdict == XRT_SUPPORT_NO) {
      no++;
      assert_string_equal(is->op, "stablehlo.add");
      assert_string_equal(is->reason, "not supported");
    } else {
      maybe++;
      assert_string_equal(is->op, "stablehlo.multiply");
      assert_string_equal(is->reason, "the plugin cannot tell");
      assert_int_equal(is->line, 2);
    }
  }
  assert_int_equal(no, ADDS);
  assert_int_equal(maybe, 1);
  xrt_support_report_release(rep);
  support_mode = 1;
  rep = NULL;
  assert_int_equal(xrt_client_query_support(c, prog, NULL, &rep),
                   XRT_INTERNAL);
  TU_ASSERT_CONTAINS(xrt_last_error(), "plugin 'judge': op_support returned "
                                       "7 for");
  assert_null(rep);
  /* an entry that does not exist */
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.entry = "absent";
  assert_int_not_equal(xrt_client_query_support(c, prog, &o, &rep), XRT_OK);
  assert_null(rep);
  xrt_program_release(prog);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
  /* PJRT registration's argument checks */
  assert_int_equal(xrt_context_register_pjrt(NULL, "p", &judging, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "invalid context");
  x = tu_context(false);
  xrt_plugin *p = (xrt_plugin *)&p;
  assert_int_equal(xrt_context_register_pjrt(x, "p", NULL, &p),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "pjrt_api is NULL");
  assert_null(p);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- the topology from the environment ---- */

static const char *topo_vars[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK",
                                  "LOCAL_WORLD_SIZE", "XRT_HOST_INDEX",
                                  "GROUP_RANK", "NODE_RANK"};

static void clear_topo_env(void) {
  for (size_t i = 0; i < TU_COUNT(topo_vars); i++) unsetenv(topo_vars[i]);
}

/* A client of default options (every topology field -1) under the
 * environment vars ("NAME=value" pairs, NULL-terminated). */
static xrt_status client_under(const char *const *vars, xrt_topology *out) {
  clear_topo_env();
  for (int i = 0; vars[i]; i += 2) setenv(vars[i], vars[i + 1], 1);
  xrt_client *c = NULL;
  xrt_status st = xrt_client_create(NULL, &c);
  if (!st) {
    assert_int_equal(xrt_client_topology(c, out), XRT_OK);
    xrt_client_release(c);
  } else {
    tu_save_error();
  }
  clear_topo_env();
  return st;
}

static void test_topology_environment(void **state) {
  (void)state;
  xrt_topology t;
  static const struct {
    const char *vars[9];
    const char *msg;
  } bad[] = {
      {{"RANK", "abc", NULL}, "RANK='abc' (for process_index) is not a "
                              "non-negative integer"},
      {{"RANK", "-1", NULL}, "RANK='-1'"},
      {{"RANK", "1x", NULL}, "RANK='1x'"},
      {{"RANK", "99999999999", NULL}, "RANK='99999999999'"},
      {{"RANK", "999999999999999999999999", NULL}, "RANK='9999"},
      {{"WORLD_SIZE", "0", NULL}, "process_count 0 (from WORLD_SIZE) must be "
                                  "at least 1"},
      {{"LOCAL_WORLD_SIZE", "0", NULL}, "local_world_size 0 (from "
                                        "LOCAL_WORLD_SIZE) must be at least 1"},
      {{"RANK", "2", "WORLD_SIZE", "2", NULL}, "process_index 2 (from RANK) "
                                               "is not below process_count 2 "
                                               "(from WORLD_SIZE)"},
      {{"LOCAL_RANK", "1", NULL}, "local_rank 1 (from LOCAL_RANK) is not "
                                  "below local_world_size 1 (from the "
                                  "default)"},
      {{"LOCAL_WORLD_SIZE", "2", NULL}, "local_world_size 2 (from "
                                        "LOCAL_WORLD_SIZE) exceeds "
                                        "process_count 1 (from the default)"},
      {{"XRT_HOST_INDEX", "h", NULL}, "XRT_HOST_INDEX='h' (for host_index)"},
      {{"XRT_HOST_INDEX", "", "NODE_RANK", "-4", NULL}, "NODE_RANK='-4'"},
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    xrt_status st = client_under(bad[i].vars, &t);
    if (st != XRT_INVALID_ARGUMENT)
      fail_msg("case %zu: %s", i, xrt_strerror(st));
    TU_ASSERT_CONTAINS(tu_msg, bad[i].msg);
  }
  /* good values, with trailing blanks; the host index from the first of
   * its variables that is set and not empty */
  const char *good[] = {"RANK",       "3 \n",       "WORLD_SIZE",
                        "4",          "LOCAL_RANK", "1",
                        "LOCAL_WORLD_SIZE", "2",    "XRT_HOST_INDEX",
                        "",           "GROUP_RANK", "5",
                        "NODE_RANK",  "6",          NULL};
  assert_int_equal(client_under(good, &t), XRT_OK);
  assert_int_equal(t.process_index, 3);
  assert_int_equal(t.process_count, 4);
  assert_int_equal(t.local_rank, 1);
  assert_int_equal(t.local_world_size, 2);
  assert_int_equal(t.host_index, 5);
  const char *node[] = {"NODE_RANK", "7", NULL};
  assert_int_equal(client_under(node, &t), XRT_OK);
  assert_int_equal(t.host_index, 7);
  assert_int_equal(t.process_count, 1);
  /* an option below -1 */
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.topology.local_rank = -2;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "topology: local_rank is -2 in the "
                                       "options");
  assert_int_equal(xrt_client_topology(NULL, &t), XRT_INVALID_ARGUMENT);
}


/* The group setup: the environment of test_env_plugins_refused. */
static int setup(void **state) {
  (void)state;
  setenv("XRT_PLUGINS", "noseparator", 1);
  return 0;
}

/* XRT_PLUGINS is read once, when the process's default context is first
 * used: the group setup sets it to an entry that is not name:path.  The
 * default context is made all the same (with a warning), its built-in
 * simulator works, and asking it for a plugin it lacks names the refused
 * entry. */
static void test_env_plugins_refused(void **state) {
  (void)state;
  xrt_log_set_callback(tu_quiet_log, NULL);
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
  xrt_log_set_callback(NULL, NULL);
  xrt_client_release(c);
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.plugin = "absent";
  assert_int_equal(xrt_client_create(&o, &c), XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(xrt_last_error(), "no device plugin named 'absent' in "
                                       "the default context (it has: 'sim')");
  TU_ASSERT_CONTAINS(xrt_last_error(), "; XRT_PLUGINS entry 1 "
                                       "('noseparator') is not name");
  unsetenv("XRT_PLUGINS");
}

TU_MAIN(setup, NULL, cmocka_unit_test(test_env_plugins_refused),
        cmocka_unit_test(test_bad_descriptions),
        cmocka_unit_test(test_version_out_of_range),
        cmocka_unit_test(test_register_and_lookups),
        cmocka_unit_test(test_lists_and_scans),
        cmocka_unit_test(test_registry_out_of_memory),
        cmocka_unit_test(test_support_answers),
        cmocka_unit_test(test_topology_environment))
