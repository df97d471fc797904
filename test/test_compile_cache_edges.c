/*
 * test_compile_cache_edges.c - the compile cache's persistent store path
 * (src/core/compile_cache.c) on damaged and refused entries: an in-memory
 * xrt_cache_store of this test's own hands the core every stored
 * executable with one byte changed, at every offset of its first bytes
 * (the core's header: names, shapes, replica counts, device assignment,
 * host-function targets, the plugin's size), and the program must still
 * compute the right values (an entry the core or the plugin rejects is
 * a compile, never a failure nor a crash).  Also: a store whose save
 * fails (a warning and a store error), a store table missing a function
 * (refused at client creation), an entry naming a host function the
 * client does not have, an entry asked for with another entry name; a
 * plugin whose serialization is not implemented, fails, returns a size
 * without bytes, or whose deserialization returns no executable; host
 * memory running out at each allocation of a load from the store.
 */
#include "test_util.h"

/* ---- a store in memory ---- */

#define MS_MAX 16

typedef struct mem_store {
  char keys[MS_MAX][80];
  unsigned char *data[MS_MAX];
  size_t size[MS_MAX];
  int n;
  int saves, loads;
  xrt_status save_status;
  /* a damage applied to loads of executables (not aliases): */
  long flip_at; /* -1: none */
  unsigned char flip_xor;
} mem_store;

static int ms_find(mem_store *m, const char *key, const char *id) {
  char k[80];
  snprintf(k, sizeof k, "%s|%s", key, id);
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->keys[i], k) == 0) return i;
  return -1;
}

static xrt_status ms_load(void *self, const char *key, const char *id,
                          void **out, size_t *size) {
  mem_store *m = (mem_store *)self;
  m->loads++;
  int i = ms_find(m, key, id);
  if (i < 0) return XRT_NOT_FOUND;
  unsigned char *d = (unsigned char *)malloc(m->size[i] ? m->size[i] : 1);
  if (!d) return XRT_RESOURCE_EXHAUSTED;
  memcpy(d, m->data[i], m->size[i]);
  if (m->flip_at >= 0 && strncmp(key, "a-", 2) != 0 &&
      (size_t)m->flip_at < m->size[i])
    d[m->flip_at] ^= m->flip_xor;
  *out = d;
  *size = m->size[i];
  return XRT_OK;
}

static xrt_status ms_save(void *self, const char *key, const char *id,
                          const void *data, size_t size, uint64_t ns) {
  mem_store *m = (mem_store *)self;
  (void)ns;
  m->saves++;
  if (m->save_status) return m->save_status;
  int i = ms_find(m, key, id);
  if (i < 0) {
    if (m->n == MS_MAX) return XRT_RESOURCE_EXHAUSTED;
    i = m->n++;
    snprintf(m->keys[i], sizeof m->keys[i], "%s|%s", key, id);
  } else {
    free(m->data[i]);
  }
  m->data[i] = (unsigned char *)malloc(size ? size : 1);
  memcpy(m->data[i], data, size);
  m->size[i] = size;
  return XRT_OK;
}

static void ms_free(mem_store *m) {
  for (int i = 0; i < m->n; i++) free(m->data[i]);
  memset(m, 0, sizeof *m);
}

static xrt_cache_store ms_table(mem_store *m) {
  xrt_cache_store s = {.struct_size = sizeof(xrt_cache_store),
                       .self = m,
                       .load = ms_load,
                       .release_data = tu_free,
                       .save = ms_save};
  return s;
}

static xrt_client *client_with(const xrt_cache_store *s, int ndev) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = ndev;
  o.cache_store = s;
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("client: %s", xrt_last_error());
  return c;
}

/* Two replicas, two inputs of two dtypes, two outputs, one host call. */
static const char *prog =
    "module @edges attributes {mhlo.num_replicas = 2 : i32} {\n"
    "func.func @main(%a: tensor<2x3xf32>, %b: tensor<i32>) -> "
    "(tensor<2x3xf32>, tensor<i32>) {\n"
    "  %0 = stablehlo.add %a, %a : tensor<2x3xf32>\n"
    "  %1 = stablehlo.multiply %b, %b : tensor<i32>\n"
    "  stablehlo.custom_call @edge.note(%b) {has_side_effect = true} : "
    "(tensor<i32>) -> ()\n"
    "  func.return %0, %1 : tensor<2x3xf32>, tensor<i32>\n}\n}\n";

/* both replicas call edge_note at once: counted atomically (a plain ++
 * lost one of the two under coverage once) */
static atomic_int notes;

static xrt_status edge_note(void *user, xrt_host_call *call) {
  (void)user, (void)call;
  atomic_fetch_add(&notes, 1);
  return XRT_OK;
}

/* Compiles prog on c (devices 1 and 0, so the assignment is not the
 * default) and checks both replicas' outputs: 2a and b*b. */
static xrt_status run_prog(xrt_client *c) {
  static const int assign[2] = {1, 0};
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = 2;
  o.num_partitions = 1; /* an assignment is keyed with both counts */
  o.device_assignment = assign;
  xrt_executable *e = NULL;
  xrt_status st = xrt_compile(c, prog, strlen(prog), &o, &e);
  if (st) return st;
  float a[6] = {1, -2, 3.5f, 4, 0, 6};
  int32_t b[2] = {7, -9};
  xrt_shape sa = TU_SHAPE(XRT_F32, 2, 3), sb = TU_SCALAR(XRT_S32);
  xrt_buffer *in[2][2] = {{NULL, NULL}, {NULL, NULL}};
  xrt_buffer *out[2][2] = {{NULL, NULL}, {NULL, NULL}};
  for (int r = 0; r < 2; r++) {
    xrt_device *d = xrt_executable_device(e, r);
    assert_int_equal(xrt_buffer_from_host(c, d, &sa, a, &in[r][0]), XRT_OK);
    assert_int_equal(xrt_buffer_from_host(c, d, &sb, &b[r], &in[r][1]),
                     XRT_OK);
  }
  xrt_buffer *const *lists[2] = {in[0], in[1]};
  xrt_buffer **olists[2] = {out[0], out[1]};
  xrt_event *done = NULL;
  st = xrt_execute_multi(e, lists, 2, 2, olists, 2, NULL, &done);
  if (!st) st = xrt_event_await(done);
  xrt_event_release(done);
  for (int r = 0; !st && r < 2; r++) {
    float fa[6];
    int32_t ib = 0;
    assert_int_equal(xrt_buffer_to_host(out[r][0], fa, sizeof fa), XRT_OK);
    assert_int_equal(xrt_buffer_to_host(out[r][1], &ib, sizeof ib), XRT_OK);
    for (int i = 0; i < 6; i++) assert_true(fa[i] == 2 * a[i]);
    assert_int_equal(ib, b[r] * b[r]);
  }
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 2; k++) {
      xrt_buffer_release(in[r][k]);
      xrt_buffer_release(out[r][k]);
    }
  xrt_executable_release(e);
  return st;
}

/* Warnings of the "cache" component, counted (and kept off stderr). */
static int cache_warnings;

static void on_log(void *user, xrt_log_level level, const char *component,
                   const char *message) {
  (void)user, (void)message;
  if (level == XRT_LOG_WARN && strcmp(component, "cache") == 0)
    cache_warnings++;
}

static xrt_cache_stats cstats(xrt_client *c) {
  xrt_cache_stats s;
  assert_int_equal(xrt_client_get_cache_stats(c, &s), XRT_OK);
  return s;
}

/* The executable's entry (not the alias) of the store. */
static int exe_entry(mem_store *m) {
  for (int i = 0; i < m->n; i++)
    if (strncmp(m->keys[i], "a-", 2) != 0) return i;
  return -1;
}

static void test_damaged_entries(void **state) {
  (void)state;
  static mem_store m;
  memset(&m, 0, sizeof m);
  m.flip_at = -1;
  xrt_cache_store st = ms_table(&m);
  xrt_client *a = client_with(&st, 2);
  assert_int_equal(xrt_client_register_host_function(a, "edge.note",
                                                     edge_note, NULL),
                   XRT_OK);
  atomic_store(&notes, 0);
  assert_int_equal(run_prog(a), XRT_OK);
  assert_int_equal(atomic_load(&notes), 2);
  assert_true(cstats(a).store_writes >= 1);
  int k = exe_entry(&m);
  assert_true(k >= 0);
  size_t size = m.size[k];
  xrt_client_release(a);
  /* A client that reads it back: a store hit. */
  xrt_client *b = client_with(&st, 2);
  assert_int_equal(xrt_client_register_host_function(b, "edge.note",
                                                     edge_note, NULL),
                   XRT_OK);
  assert_int_equal(run_prog(b), XRT_OK);
  assert_int_equal(cstats(b).store_hits, 1);
  /* Every byte of the first 320 (or all), changed two ways. */
  size_t span = size < 320 ? size : 320;
  static const unsigned char xors[] = {0x01, 0x80};
  int rejected = 0;
  xrt_log_set_callback(on_log, NULL);
  cache_warnings = 0;
  for (size_t at = 0; at < span; at++)
    for (size_t x = 0; x < TU_COUNT(xors); x++) {
      m.flip_at = (long)at;
      m.flip_xor = xors[x];
      assert_int_equal(xrt_client_clear_cache(b), XRT_OK);
      xrt_cache_stats before = cstats(b);
      xrt_status s = run_prog(b);
      if (s != XRT_OK)
        fail_msg("byte %zu ^ 0x%02x: %s: %s", at, xors[x], xrt_strerror(s),
                 xrt_last_error());
      xrt_cache_stats after = cstats(b);
      rejected += after.store_hits == before.store_hits;
    }
  m.flip_at = -1;
  xrt_log_set_callback(NULL, NULL);
  /* rejected entries are warnings (a damaged alias id or name is not
   * always one: a mismatch there is a plain miss) */
  assert_true(cache_warnings > (int)span);
  assert_true(cache_warnings <= rejected);
  /* most damages are caught (some bytes, e.g. inside a name's unused
   * capacity or a float payload the plugin hashes, may be either) */
  assert_true(rejected > (int)span);
  xrt_client_release(b);
  /* A client without the host function: the entry cannot be bound, and
   * the compile that follows fails for want of the target. */
  xrt_client *c = client_with(&st, 2);
  xrt_status s = run_prog(c);
  assert_int_not_equal(s, XRT_OK);
  TU_ASSERT_CONTAINS(xrt_last_error(), "edge.note");
  assert_int_equal(cstats(c).store_hits, 0);
  xrt_client_release(c);
  ms_free(&m);
}

/* A store whose saves fail: a store error per executable, no failure. */
static void test_store_save_fails(void **state) {
  (void)state;
  static mem_store m;
  memset(&m, 0, sizeof m);
  m.flip_at = -1;
  m.save_status = XRT_UNAVAILABLE;
  xrt_cache_store st = ms_table(&m);
  xrt_log_set_callback(on_log, NULL);
  cache_warnings = 0;
  xrt_client *a = client_with(&st, 2);
  assert_int_equal(xrt_client_register_host_function(a, "edge.note",
                                                     edge_note, NULL),
                   XRT_OK);
  assert_int_equal(run_prog(a), XRT_OK);
  xrt_cache_stats s = cstats(a);
  assert_true(m.saves >= 1);
  assert_true(s.store_errors >= 1);
  assert_int_equal(m.n, 0);
  assert_true(cache_warnings >= 1); /* "could not save" */
  xrt_log_set_callback(NULL, NULL);
  xrt_client_release(a);
  /* tables missing a function, or too small */
  static const int which[] = {0, 1, 2, 3};
  for (size_t i = 0; i < TU_COUNT(which); i++) {
    xrt_cache_store bad = ms_table(&m);
    if (which[i] == 0) bad.load = NULL;
    if (which[i] == 1) bad.save = NULL;
    if (which[i] == 2) bad.release_data = NULL;
    if (which[i] == 3) bad.struct_size = 8;
    xrt_client_options o;
    xrt_client_options_init(&o);
    o.cache_store = &bad;
    xrt_client *c = NULL;
    assert_int_equal(xrt_client_create(&o, &c), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(xrt_last_error(), "cache_store: struct_size");
    assert_null(c);
  }
  ms_free(&m);
}

/* The same text asked for with an entry name that is not the stored
 * one's: a different key, so a store miss and a compile of @second. */
static void test_entry_names(void **state) {
  (void)state;
  static mem_store m;
  memset(&m, 0, sizeof m);
  m.flip_at = -1;
  xrt_cache_store st = ms_table(&m);
  const char *two = "func.func @main(%a: tensor<i32>) -> tensor<i32> {\n"
                    "  %0 = stablehlo.add %a, %a : tensor<i32>\n"
                    "  func.return %0 : tensor<i32>\n}\n"
                    "func.func @second(%a: tensor<i32>) -> tensor<i32> {\n"
                    "  %0 = stablehlo.multiply %a, %a : tensor<i32>\n"
                    "  func.return %0 : tensor<i32>\n}\n";
  xrt_client *a = client_with(&st, 1);
  int32_t v = 6;
  tu_in in = {TU_SCALAR(XRT_S32), &v};
  tu_out out;
  TU_RUN_OK(a, two, 1, &in, &out);
  TU_ASSERT_OUT(&out, 0, int32_t, 12);
  tu_out_free(&out);
  xrt_client_release(a);
  xrt_client *b = client_with(&st, 1);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.entry = "second";
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(b, two, strlen(two), &o, &e), XRT_OK);
  xrt_buffer *arg = NULL, *res = NULL;
  assert_int_equal(xrt_buffer_from_host(b, xrt_client_device(b, 0), &in.shape,
                                        &v, &arg), XRT_OK);
  assert_int_equal(xrt_execute(e, xrt_client_device(b, 0), &arg, 1, &res, 1,
                               NULL), XRT_OK);
  int32_t r = 0;
  assert_int_equal(xrt_buffer_to_host(res, &r, sizeof r), XRT_OK);
  assert_int_equal(r, 36);
  assert_int_equal(cstats(b).store_hits, 0);
  xrt_buffer_release(arg);
  xrt_buffer_release(res);
  xrt_executable_release(e);
  /* main again: now a store hit */
  TU_RUN_OK(b, two, 1, &in, &out);
  TU_ASSERT_OUT(&out, 0, int32_t, 12);
  tu_out_free(&out);
  assert_int_equal(cstats(b).store_hits, 1);
  xrt_client_release(b);
  ms_free(&m);
}


/* ---- a plugin whose serialization misbehaves ---- */

static int ser_mode; /* 0: as the simulator; 1: UNIMPLEMENTED; 2: a
                      * failure; 3: no bytes but a size; 4: deserialize
                      * says OK without an executable */

static xrt_status odd_serialize(void *exe, void **out, size_t *size,
                                xrt_plugin_error *err) {
  switch (ser_mode) {
  case 1: return XRT_UNIMPLEMENTED;
  case 2:
    snprintf(err->message, sizeof err->message, "cannot today");
    return XRT_INTERNAL;
  case 3:
    *out = NULL;
    *size = 5;
    return XRT_OK;
  default: return xrt_sim_plugin_api()->executable_serialize(exe, out, size,
                                                             err);
  }
}

static xrt_status odd_deserialize(void *client,
                                  const xrt_plugin_compile_args *args,
                                  const void *data, size_t size, void **out,
                                  xrt_plugin_error *err) {
  if (ser_mode == 4) {
    *out = NULL;
    return XRT_OK;
  }
  return xrt_sim_plugin_api()->executable_deserialize(client, args, data,
                                                      size, out, err);
}

static xrt_client *odd_client(xrt_context *x, const xrt_cache_store *st) {
  xrt_client_options o = tu_client_options(x, "odd", 1);
  o.cache_store = st;
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("client: %s", xrt_last_error());
  return c;
}

static const char *sq = "func.func @main(%a: tensor<i32>) -> tensor<i32> {\n"
                        "  %0 = stablehlo.multiply %a, %a : tensor<i32>\n"
                        "  func.return %0 : tensor<i32>\n}\n";

static void run_sq(xrt_client *c, int32_t v) {
  tu_in in = {TU_SCALAR(XRT_S32), &v};
  tu_out out;
  TU_RUN_OK(c, sq, 1, &in, &out);
  TU_ASSERT_OUT(&out, 0, int32_t, v * v);
  tu_out_free(&out);
}

static void test_plugin_serialization(void **state) {
  (void)state;
  static xrt_plugin_api odd;
  odd = tu_sim_table("odd");
  odd.executable_serialize = odd_serialize;
  odd.executable_deserialize = odd_deserialize;
  xrt_context *x = tu_context_with(&odd);
  static mem_store m; /* zero: static */
  xrt_cache_store st = ms_table(&m);
  xrt_log_set_callback(on_log, NULL);
  static const struct {
    int mode;
    uint64_t writes, errors, warnings;
  } want[] = {{1, 0, 0, 0}, {2, 0, 1, 1}, {3, 0, 1, 1}};
  for (size_t i = 0; i < TU_COUNT(want); i++) {
    ms_free(&m); /* the aliases the last client left */
    m.flip_at = -1;
    ser_mode = want[i].mode;
    cache_warnings = 0;
    xrt_client *c = odd_client(x, &st);
    run_sq(c, 7);
    xrt_cache_stats s = cstats(c);
    assert_int_equal(s.store_writes, want[i].writes);
    assert_int_equal(s.store_errors, want[i].errors);
    assert_int_equal((uint64_t)cache_warnings, want[i].warnings);
    assert_int_equal(exe_entry(&m), -1); /* no executable (an alias may be) */
    xrt_client_release(c);
  }
  /* stored as usual, then loaded by a plugin that returns no executable:
   * refused (a warning, a store error) and compiled */
  ms_free(&m);
  m.flip_at = -1;
  ser_mode = 0;
  xrt_client *c = odd_client(x, &st);
  run_sq(c, 5);
  assert_int_equal(cstats(c).store_writes, 1);
  xrt_client_release(c);
  ser_mode = 4;
  cache_warnings = 0;
  c = odd_client(x, &st);
  run_sq(c, -6);
  xrt_cache_stats s = cstats(c);
  assert_int_equal(s.store_hits, 0);
  assert_int_equal(s.store_errors, 1);
  assert_int_equal(cache_warnings, 1);
  xrt_client_release(c);
  ser_mode = 0;
  xrt_log_set_callback(NULL, NULL);
  ms_free(&m);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* Host memory running out at each allocation of a compile answered by
 * the store: every run either computes the right value (a failed load is
 * a compile) or fails with RESOURCE_EXHAUSTED, and nothing leaks. */
static void test_store_load_out_of_memory(void **state) {
  (void)state;
  static mem_store m;
  memset(&m, 0, sizeof m);
  m.flip_at = -1;
  xrt_cache_store st = ms_table(&m);
  xrt_client *a = client_with(&st, 1);
  run_sq(a, 3);
  xrt_client_release(a);
  assert_true(m.n >= 1);
  tu_counting_alloc ca;
  tu_counting_init(&ca, 0);
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 1;
  o.cache_store = &st;
  o.allocator = tu_counting_allocator(&ca);
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  xrt_log_set_callback(on_log, NULL);
  int failures = 0, hits = 0;
  for (long k = 1; k < 400; k++) {
    assert_int_equal(xrt_client_clear_cache(c), XRT_OK);
    xrt_cache_stats before = cstats(c);
    tu_counting_arm(&ca, k);
    int32_t v = (int32_t)k;
    tu_in in = {TU_SCALAR(XRT_S32), &v};
    tu_out out;
    xrt_status s = tu_run(c, sq, 1, &in, &out);
    bool injected = tu_counting_disarm(&ca);
    if (s == XRT_OK) {
      TU_ASSERT_OUT(&out, 0, int32_t, v * v);
      tu_out_free(&out);
    } else {
      assert_int_equal(s, XRT_RESOURCE_EXHAUSTED);
      failures++;
    }
    hits += cstats(c).store_hits > before.store_hits;
    if (!injected) break;
  }
  xrt_log_set_callback(NULL, NULL);
  assert_true(failures + hits > 0);
  assert_true(hits >= 1); /* the last run, with nothing failing */
  xrt_client_release(c);
  assert_int_equal(atomic_load(&ca.live), 0);
  ms_free(&m);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_damaged_entries),
        cmocka_unit_test(test_store_save_fails),
        cmocka_unit_test(test_entry_names),
        cmocka_unit_test(test_plugin_serialization),
        cmocka_unit_test(test_store_load_out_of_memory))
