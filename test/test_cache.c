/*
 * test_cache.c - the compilation cache of the core (issue #7): keys that
 * ignore debug locations and comments but not what changes the result,
 * one compile per key under concurrency, remembered failures, LRU
 * eviction by bytes, independent handles over a shared executable, and a
 * persistent store (an in-test map) behind the in-memory cache, fed by a
 * test plugin that wraps the simulator and serializes its executables as
 * their program text.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include "test_util.h"

#include <pthread.h>

/* ---- programs ---- */

static const char *kAdd =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* kAdd as JAX prints it: locations, aliases, comments, other spacing. */
static const char *kAddLoc =
    "// a comment (with \"quotes\" and loc(stuff))\n"
    "#loc1 = loc(\"model.py\":12:3)\n"
    "module @jit_f attributes {mhlo.num_replicas = 1 : i32} {\n"
    "  func.func public @main(%a: tensor<4xf32> loc(\"a\"), %b: tensor<4xf32> "
    "loc(\"b\")) -> tensor<4xf32> {\n"
    "    %0 = stablehlo.add %a, %b : tensor<4xf32> loc(#loc3)   // sum\n"
    "    func.return %0 : tensor<4xf32> loc(callsite(#loc1 at "
    "fused[\"x(\", #loc2]))\n"
    "  } loc(#loc)\n"
    "} loc(#loc)\n"
    "#loc = loc(unknown)\n"
    "#loc2 = loc(\"model.py\":13:1)\n"
    "#loc3 = loc(\"jit(f)/add\"(#loc1))\n";

static const char *kAddMod =
    "module @jit_f attributes {mhlo.num_replicas = 1 : i32} {\n"
    "  func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> "
    "tensor<4xf32> {\n"
    "    %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "    func.return %0 : tensor<4xf32>\n"
    "  }\n"
    "}\n";

/* Two entry points. */
static const char *kTwo =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n"
    "func.func @mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.multiply %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* x * k + b for a constant k written into the text. */
static void affine_text(char *buf, size_t cap, int k) {
  snprintf(buf, cap,
           "func.func @main(%%a: tensor<4xf32>, %%b: tensor<4xf32>) -> "
           "tensor<4xf32> {\n"
           "  %%k = stablehlo.constant dense<%d.0> : tensor<4xf32>\n"
           "  %%0 = stablehlo.multiply %%a, %%k : tensor<4xf32>\n"
           "  %%1 = stablehlo.add %%0, %%b : tensor<4xf32>\n"
           "  func.return %%1 : tensor<4xf32>\n"
           "}\n", k);
}

static xrt_compile_options opts(void) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  return o;
}

static void key_of(xrt_client *c, const char *text,
                   const xrt_compile_options *o, char key[33]) {
  xrt_status s = xrt_compile_cache_key(c, text, strlen(text), o, key);
  if (s != XRT_OK) fail_msg("cache key: %s", xrt_last_error());
  assert_int_equal(strlen(key), 32);
  for (int i = 0; i < 32; i++)
    assert_true((key[i] >= '0' && key[i] <= '9') ||
                (key[i] >= 'a' && key[i] <= 'f'));
}

static xrt_executable *compile_o(xrt_client *c, const char *text,
                                 const xrt_compile_options *o) {
  xrt_executable *e = NULL;
  if (xrt_compile(c, text, strlen(text), o, &e) != XRT_OK)
    fail_msg("compile: %s", xrt_last_error());
  return e;
}

/* Runs a two-input f32[4] executable on device 0 into out. */
static void run2(xrt_client *c, xrt_executable *e, const float *a,
                 const float *b, float *out) {
  xrt_device *d = xrt_client_device(c, 0);
  xrt_shape sh = TU_SHAPE(XRT_F32, 4);
  xrt_buffer *in[2] = {NULL, NULL}, *res = NULL;
  assert_int_equal(xrt_buffer_from_host(c, d, &sh, a, &in[0]), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, d, &sh, b, &in[1]), XRT_OK);
  if (xrt_execute(e, d, in, 2, &res, 1, NULL) != XRT_OK)
    fail_msg("execute: %s", xrt_last_error());
  assert_int_equal(xrt_buffer_to_host(res, out, 4 * sizeof(float)), XRT_OK);
  xrt_buffer_release(res);
  xrt_buffer_release(in[0]);
  xrt_buffer_release(in[1]);
}

static const float kA[4] = {1, 2, 3, 4}, kB[4] = {10, 20, 30, 40};

/* Checks e computes a * k + b (k = 1 with add: kAdd is k 1). */
static void assert_affine(xrt_client *c, xrt_executable *e, float k) {
  float out[4];
  run2(c, e, kA, kB, out);
  for (int i = 0; i < 4; i++) assert_true(out[i] == kA[i] * k + kB[i]);
}

static xrt_cache_stats cstats(xrt_client *c) {
  xrt_cache_stats s;
  assert_int_equal(xrt_client_get_cache_stats(c, &s), XRT_OK);
  return s;
}

static xrt_client_stats stats(xrt_client *c) {
  xrt_client_stats s;
  assert_int_equal(xrt_client_get_stats(c, &s), XRT_OK);
  return s;
}

/* ---- keys ---- */

static void test_key_ignores_locations_and_comments(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  xrt_compile_options o = opts();
  char k1[33], k2[33], k3[33];
  key_of(c, kAddMod, &o, k1);
  key_of(c, kAddLoc, &o, k2);
  assert_string_equal(k1, k2);
  /* Extra blank lines and indentation read the same. */
  char spaced[1024];
  snprintf(spaced, sizeof spaced, "\n\n  %s\n\n", kAddMod);
  key_of(c, spaced, &o, k3);
  assert_string_equal(k1, k3);
  /* Keeping locations: they count, and so do comments. */
  o.cache_keep_locations = 1;
  key_of(c, kAddLoc, &o, k2);
  key_of(c, kAddMod, &o, k3);
  assert_string_not_equal(k2, k3);
  assert_string_not_equal(k1, k3);
  /* The program itself counts. */
  o = opts();
  key_of(c, kAdd, &o, k2);
  char text[1024];
  affine_text(text, sizeof text, 2);
  key_of(c, text, &o, k3);
  assert_string_not_equal(k2, k3);
  /* "loc(" and "//" inside a string literal are program, not location. */
  const char *s1 = "func.func @main() -> () { \"x.y\"() {s = \"a//b\"} : () -> "
                   "() func.return }";
  const char *s2 = "func.func @main() -> () { \"x.y\"() {s = \"a\"} : () -> () "
                   "func.return }";
  const char *s3 = "func.func @main() -> () { \"x.y\"() {s = \"loc(1)\"} : () "
                   "-> () func.return }";
  const char *s4 = "func.func @main() -> () { \"x.y\"() {s = \"\"} : () -> () "
                   "func.return }";
  key_of(c, s1, &o, k1);
  key_of(c, s2, &o, k2);
  assert_string_not_equal(k1, k2);
  key_of(c, s3, &o, k1);
  key_of(c, s4, &o, k2);
  assert_string_not_equal(k1, k2);
  /* An identifier ending in "loc" is not a location. */
  key_of(c, "%x = foo.myloc(%a)", &o, k1);
  key_of(c, "%x = foo.my", &o, k2);
  assert_string_not_equal(k1, k2);
  xrt_client_release(c);
}

static void test_key_options_and_topology(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 1, 0);
  xrt_compile_options o = opts();
  char base[33], k[33];
  key_of(c, kTwo, &o, base);
  /* File name and line offset change messages, not the executable. */
  o.filename = "model.mlir";
  o.line_offset = 7;
  key_of(c, kTwo, &o, k);
  assert_string_equal(base, k);
  o = opts();
  o.entry = "mul";
  key_of(c, kTwo, &o, k);
  assert_string_not_equal(base, k);
  o = opts();
  o.num_replicas = 2;
  key_of(c, kTwo, &o, k);
  assert_string_not_equal(base, k);
  char k01[33], k10[33];
  int a01[2] = {0, 1}, a10[2] = {1, 0};
  o.num_partitions = 1;
  o.device_assignment = a01;
  key_of(c, kTwo, &o, k01);
  o.device_assignment = a10;
  key_of(c, kTwo, &o, k10);
  assert_string_not_equal(k01, k10);
  /* An assignment whose length the options do not give is refused. */
  o.num_partitions = 0;
  assert_int_equal(xrt_compile_cache_key(c, kTwo, strlen(kTwo), &o, k),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device_assignment");
  /* ... and such a compile still works, uncached. */
  xrt_executable *e = compile_o(c, kTwo, &o);
  assert_int_equal(cstats(c).misses, 0);
  assert_int_equal(xrt_executable_num_replicas(e), 2);
  assert_ptr_equal(xrt_executable_device(e, 0), xrt_client_device(c, 1));
  xrt_executable_release(e);
  /* Another device count is another key. */
  xrt_client *c1 = tu_client(1, 1, 0);
  o = opts();
  key_of(c1, kTwo, &o, k);
  assert_string_not_equal(base, k);
  /* Bad arguments. */
  assert_int_equal(xrt_compile_cache_key(c, kTwo, strlen(kTwo), NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_compile_cache_key(NULL, kTwo, strlen(kTwo), NULL, k),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_compile_cache_key(c, NULL, 3, NULL, k),
                   XRT_INVALID_ARGUMENT);
  xrt_client_release(c1);
  xrt_client_release(c);
}

/* ---- a plugin that serializes: the simulator, wrapped ----
 *
 * Its executables are {the simulator's executable, the program it was
 * rebuilt from}; serialize writes "WRAP" and the program text the test
 * compiled (g_text), deserialize parses that text and compiles it with
 * the simulator directly (the core's compile counter does not move). */

typedef struct wexe {
  void *inner;
  xrt_program *prog; /* deserialized ones: their module */
} wexe;

static const xrt_plugin_api *g_sim;
static xrt_plugin_api g_wrap, g_wrap2, g_old;
static const char *g_text;             /* what serialize writes */
static int g_deserialized, g_serialized;

static xrt_status w_fail(xrt_plugin_error *err, xrt_status s, const char *m) {
  snprintf(err->message, sizeof err->message, "%s", m);
  return s;
}

static xrt_status w_compile(void *client, const xrt_plugin_compile_args *args,
                            void **out, xrt_plugin_error *err) {
  wexe *w = (wexe *)calloc(1, sizeof *w);
  if (!w) return w_fail(err, XRT_RESOURCE_EXHAUSTED, "oom");
  xrt_status s = g_sim->compile(client, args, &w->inner, err);
  if (s) {
    free(w);
    return s;
  }
  *out = w;
  return XRT_OK;
}

static void w_destroy(void *exe) {
  wexe *w = (wexe *)exe;
  g_sim->executable_destroy(w->inner);
  xrt_program_release(w->prog);
  free(w);
}

static xrt_status w_execute(void *client, const xrt_plugin_execute_args *args,
                            xrt_plugin_error *err) {
  xrt_plugin_execute_args a = *args;
  a.executable = ((wexe *)args->executable)->inner;
  return g_sim->execute(client, &a, err);
}

static xrt_status w_serialize(void *exe, void **out, size_t *size,
                              xrt_plugin_error *err) {
  (void)exe;
  size_t n = strlen(g_text);
  char *d = (char *)malloc(4 + n);
  if (!d) return w_fail(err, XRT_RESOURCE_EXHAUSTED, "oom");
  memcpy(d, "WRAP", 4);
  memcpy(d + 4, g_text, n);
  *out = d;
  *size = 4 + n;
  g_serialized++;
  return XRT_OK;
}

static void w_serialized_free(void *data) { free(data); }

static xrt_status w_deserialize(void *client,
                                const xrt_plugin_compile_args *args,
                                const void *data, size_t size, void **out,
                                xrt_plugin_error *err) {
  if (args->module || args->entry != -1 || size < 4 ||
      memcmp(data, "WRAP", 4) != 0)
    return w_fail(err, XRT_INVALID_ARGUMENT, "not a WRAP executable");
  wexe *w = (wexe *)calloc(1, sizeof *w);
  if (!w) return w_fail(err, XRT_RESOURCE_EXHAUSTED, "oom");
  if (xrt_program_parse((const char *)data + 4, size - 4, NULL, &w->prog)) {
    free(w);
    return w_fail(err, XRT_INVALID_ARGUMENT, "bad WRAP text");
  }
  xrt_plugin_compile_args a = *args;
  a.module = xrt_program_module(w->prog);
  a.entry = 0;
  xrt_status s = g_sim->compile(client, &a, &w->inner, err);
  if (s) {
    xrt_program_release(w->prog);
    free(w);
    return s;
  }
  g_deserialized++;
  *out = w;
  return XRT_OK;
}

/* A context with "simwrap" (serializes), "simwrap2" (the same, another
 * version) and "simold" (ABI 1.0: no serialize entries at all). */
static xrt_context *wrap_context(void) {
  g_sim = xrt_sim_plugin_api();
  g_wrap = *g_sim;
  g_wrap.name = "simwrap";
  g_wrap.compile = w_compile;
  g_wrap.executable_destroy = w_destroy;
  g_wrap.execute = w_execute;
  g_wrap.executable_serialize = w_serialize;
  g_wrap.serialized_free = w_serialized_free;
  g_wrap.executable_deserialize = w_deserialize;
  g_wrap2 = g_wrap;
  g_wrap2.name = "simwrap2";
  g_wrap2.version = "2.0-test";
  g_old = g_wrap;
  g_old.name = "simold";
  g_old.abi_minor = 0;
  g_old.struct_size = offsetof(xrt_plugin_api, executable_serialize);
  xrt_context *x = tu_context(false);
  assert_int_equal(xrt_context_register_plugin(x, NULL, &g_wrap, NULL), XRT_OK);
  assert_int_equal(xrt_context_register_plugin(x, NULL, &g_wrap2, NULL),
                   XRT_OK);
  assert_int_equal(xrt_context_register_plugin(x, NULL, &g_old, NULL), XRT_OK);
  return x;
}

/* ---- the text as the key reads it, against a reference ---- */

/* The reference reader, one character at a time (the section comment of
 * _dev/cache_core.inc): comments, loc(...) with the blanks before it and
 * "#locN =" at a line start dropped, other blank runs read as one space,
 * strings verbatim.  Writes the text read to out (as large as t). */
static bool ref_ident(char ch) {
  unsigned char u = (unsigned char)ch;
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
         (u >= '0' && u <= '9') || strchr("_.$@%#", ch) || u >= 0x80;
}
static bool ref_blank(char ch) { return ch && strchr(" \t\n\r\f\v", ch); }
static size_t ref_string_end(const char *t, size_t n, size_t i) {
  for (i++; i < n; i++) {
    if (t[i] == '\\') i++;
    else if (t[i] == '"') return i + 1;
  }
  return n;
}
static size_t ref_canon(const char *t, size_t n, char *out) {
  size_t o = 0, i = 0;
  bool space = false, line_start = true, any = false;
  while (i < n) {
    char ch = t[i];
    if (ref_blank(ch)) {
      space = any;
      line_start = line_start || ch == '\n';
      i++;
    } else if (ch == '/' && i + 1 < n && t[i + 1] == '/') {
      while (i < n && t[i] != '\n') i++;
    } else if (line_start && n - i >= 4 && !memcmp(t + i, "#loc", 4)) {
      size_t j = i + 4;
      while (j < n && ref_ident(t[j]) && t[j] != '#') j++;
      while (j < n && (t[j] == ' ' || t[j] == '\t')) j++;
      line_start = false;
      if (j < n && t[j] == '=') {
        i = j + 1;
        continue;
      }
      goto token;
    } else if (ch == 'l' && n - i >= 4 && !memcmp(t + i, "loc(", 4) &&
               (i == 0 || !ref_ident(t[i - 1]))) {
      line_start = false;
      int depth = 0;
      for (i += 3; i < n;) {
        if (t[i] == '"') {
          i = ref_string_end(t, n, i);
          continue;
        }
        if (t[i] == '(') depth++;
        if (t[i++] == ')' && --depth == 0) break;
      }
      space = false;
    } else {
    token:
      line_start = false;
      size_t end = ch == '"' ? ref_string_end(t, n, i) : i + 1;
      if (space) out[o++] = ' ';
      space = false;
      any = true;
      memcpy(out + o, t + i, end - i);
      o += end - i;
      i = end;
    }
  }
  out[o] = 0;
  return o;
}

/* key(text) must be key(the reference's reading of text); checked where
 * the reading reads as itself again (a removed location can join "/" and
 * "/" into a comment). */
static bool same_key_as_reference(xrt_client *c, const char *text) {
  size_t n = strlen(text);
  char *r = malloc(n + 1), *r2 = malloc(n + 1);
  assert_true(r && r2);
  size_t rn = ref_canon(text, n, r);
  bool checked = ref_canon(r, rn, r2) == rn && !memcmp(r, r2, rn);
  if (checked) {
    char k1[33], k2[33];
    key_of(c, text, NULL, k1);
    key_of(c, r, NULL, k2);
    if (strcmp(k1, k2)) fail_msg("key differs from the reference's for "
                                 "[%s] read as [%s]", text, r);
  }
  free(r);
  free(r2);
  return checked;
}

static void test_key_reads_like_the_reference(void **state) {
  (void)state;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
  static const char *tricky[] = {
      "%0 = \"loc(\" loc(#loc1) // c\n%1 = \"a // b\" loc(\"f\":1:2)",
      "x loc(fused[\"a)\", loc(\"b\":1:2)]) , y",
      "#loc1 = loc(\"m.py\":3:4)\r\n#loc2 = loc(callsite(#loc1 at #loc1))\r\n",
      "a\r\n  b\t\tc \f\v d // end",
      "  \"esc \\\" loc( // \" and \"\\\\\" loc(x)",
      "alloc(1) colloc(2) _loc(3) .loc(4) @loc(5) %loc(6) -loc(7)",
      "a / b // c\n/ d /",
      "#loc = 1\n #loc2 = 2\nx #loc3 = 3\n#locX y\n#loc_a\t= z",
      "unterminated \"string loc( //",
      "unclosed loc(\"(\" (( x",
      "caf\xc3\xa9 loc(1) \xc3\xa9",
      "",
      "   \n\n  ",
  };
  for (size_t i = 0; i < TU_COUNT(tricky); i++)
    if (!same_key_as_reference(c, tricky[i]))
      fail_msg("tricky input %zu: reference not stable", i);
  /* Random texts from pieces that matter. */
  static const char *pieces[] = {
      "loc(", "//", "\"", "\\", "#loc", "#loc1 = ", "(", ")", " ", "  ",
      "\n", "\r\n", "\t", "a", "l", "o", "c", "=", "/", "x ", "#", "%0",
      "lo", "oc(", "\xc3\xa9", "stablehlo.add"};
  char text[400];
  unsigned seed = 7;
  int checked = 0;
  for (int it = 0; it < 20000; it++) {
    size_t n = 0;
    seed = seed * 1103515245u + 12345u;
    int k = (int)((seed >> 16) % 30);
    for (int j = 0; j < k; j++) {
      seed = seed * 1103515245u + 12345u;
      const char *p = pieces[(seed >> 16) % TU_COUNT(pieces)];
      memcpy(text + n, p, strlen(p));
      n += strlen(p);
    }
    text[n] = 0;
    checked += same_key_as_reference(c, text);
  }
  assert_true(checked > 15000);
  /* Strings are read verbatim: a change inside one is a new key. */
  char k1[33], k2[33];
  key_of(c, "x = \"a  loc(1) // b\"", NULL, k1);
  key_of(c, "x = \"a loc(1) // b\"", NULL, k2);
  assert_string_not_equal(k1, k2);
  xrt_client_release(c);
}

/* ---- a store: a map in memory ---- */

#define MAP_CAP 16
typedef struct map_store {
  pthread_mutex_t mu;
  struct {
    char key[33], who[160];
    unsigned char *data;
    size_t size;
  } e[MAP_CAP];
  int n, loads, saves, releases;
  xrt_status load_status; /* XRT_OK: answer normally */
  xrt_cache_store store;
} map_store;

static xrt_status map_load(void *self, const char *key, const char *who,
                           void **out, size_t *size) {
  map_store *m = (map_store *)self;
  xrt_status s = XRT_NOT_FOUND;
  pthread_mutex_lock(&m->mu);
  m->loads++;
  if (m->load_status) s = m->load_status;
  for (int i = 0; i < m->n && s == XRT_NOT_FOUND; i++)
    if (!strcmp(m->e[i].key, key) && !strcmp(m->e[i].who, who)) {
      *out = malloc(m->e[i].size ? m->e[i].size : 1);
      memcpy(*out, m->e[i].data, m->e[i].size);
      *size = m->e[i].size;
      s = XRT_OK;
    }
  pthread_mutex_unlock(&m->mu);
  return s;
}

static void map_release(void *self, void *data) {
  map_store *m = (map_store *)self;
  pthread_mutex_lock(&m->mu);
  m->releases++;
  pthread_mutex_unlock(&m->mu);
  free(data);
}

static xrt_status map_save(void *self, const char *key, const char *who,
                           const void *data, size_t size, uint64_t ns) {
  (void)ns;
  map_store *m = (map_store *)self;
  pthread_mutex_lock(&m->mu);
  m->saves++;
  int i = 0;
  while (i < m->n && (strcmp(m->e[i].key, key) || strcmp(m->e[i].who, who)))
    i++;
  if (i == MAP_CAP) {
    pthread_mutex_unlock(&m->mu);
    return XRT_RESOURCE_EXHAUSTED;
  }
  if (i == m->n) m->n++;
  free(m->e[i].data);
  snprintf(m->e[i].key, sizeof m->e[i].key, "%s", key);
  snprintf(m->e[i].who, sizeof m->e[i].who, "%s", who);
  m->e[i].data = (unsigned char *)malloc(size);
  memcpy(m->e[i].data, data, size);
  m->e[i].size = size;
  pthread_mutex_unlock(&m->mu);
  return XRT_OK;
}

static void map_init(map_store *m) {
  memset(m, 0, sizeof *m);
  pthread_mutex_init(&m->mu, NULL);
  m->store.struct_size = sizeof m->store;
  m->store.self = m;
  m->store.load = map_load;
  m->store.release_data = map_release;
  m->store.save = map_save;
}

static void map_free(map_store *m) {
  for (int i = 0; i < m->n; i++) free(m->e[i].data);
  pthread_mutex_destroy(&m->mu);
}

static xrt_client *store_client(xrt_context *x, const char *plugin,
                                map_store *m, size_t budget) {
  xrt_client_options o = tu_client_options(x, plugin, 1);
  o.cache_store = m ? &m->store : NULL;
  o.compile_cache_bytes = budget;
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("client of %s: %s", plugin, xrt_last_error());
  return c;
}

static void test_key_plugins(void **state) {
  (void)state;
  xrt_context *x = wrap_context();
  xrt_client *w = store_client(x, "simwrap", NULL, 1 << 20);
  xrt_client *w2 = store_client(x, "simwrap2", NULL, 1 << 20);
  xrt_client *s = tu_client(1, 1, 0);
  xrt_compile_options o = opts();
  char kw[33], kw2[33], ks[33];
  key_of(w, kAdd, &o, kw);
  key_of(w2, kAdd, &o, kw2);
  key_of(s, kAdd, &o, ks);
  assert_string_not_equal(kw, kw2); /* name and version */
  assert_string_not_equal(kw, ks);
  assert_string_not_equal(kw2, ks);
  xrt_client_release(s);
  xrt_client_release(w2);
  xrt_client_release(w);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- in memory ---- */

static void test_hit_shares_and_handles_are_independent(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  xrt_client_stats s0 = stats(c);
  xrt_executable *e1 = compile_o(c, kAddMod, NULL);
  xrt_compile_options o = opts();
  o.filename = "other.mlir";
  xrt_executable *e2 = compile_o(c, kAddLoc, &o); /* same key */
  xrt_executable *e3 = compile_o(c, kAddMod, NULL);
  assert_ptr_not_equal(e1, e2);
  assert_ptr_not_equal(e2, e3);
  xrt_client_stats s1 = stats(c);
  assert_int_equal(s1.compiles - s0.compiles, 1);
  assert_int_equal(s1.compile_cache_hits - s0.compile_cache_hits, 2);
  xrt_cache_stats cs = cstats(c);
  assert_int_equal(cs.misses, 1);
  assert_int_equal(cs.hits, 2);
  assert_int_equal(cs.entries, 1);
  assert_true(cs.bytes > 0);
  assert_string_equal(xrt_executable_name(e2), "main");
  assert_int_equal(xrt_executable_num_inputs(e2), 2);
  /* Release in any order: the others keep working. */
  assert_int_equal(xrt_executable_release(e2), XRT_OK);
  assert_int_equal(xrt_executable_release(e2), XRT_INVALID_ARGUMENT);
  assert_affine(c, e1, 1);
  assert_affine(c, e3, 1);
  assert_int_equal(xrt_executable_release(e1), XRT_OK);
  assert_affine(c, e3, 1);
  /* Clearing the cache leaves handed-out executables valid. */
  assert_int_equal(xrt_client_clear_cache(c), XRT_OK);
  cs = cstats(c);
  assert_int_equal(cs.entries, 0);
  assert_int_equal(cs.bytes, 0);
  assert_affine(c, e3, 1);
  xrt_executable *e4 = compile_o(c, kAddMod, NULL); /* compiled again */
  assert_int_equal(stats(c).compiles - s0.compiles, 2);
  assert_int_equal(xrt_executable_release(e3), XRT_OK);
  assert_affine(c, e4, 1);
  /* xrt_compile_program shares the key of the same text. */
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(kAddLoc, strlen(kAddLoc), NULL, &p),
                   XRT_OK);
  xrt_executable *e5 = NULL;
  assert_int_equal(xrt_compile_program(c, p, NULL, &e5), XRT_OK);
  xrt_program_release(p);
  assert_int_equal(stats(c).compiles - s0.compiles, 2);
  assert_affine(c, e5, 1);
  xrt_executable_release(e5);
  /* e4 is left for client release to free. */
  assert_int_equal(xrt_client_clear_cache(NULL), XRT_INVALID_ARGUMENT);
  xrt_cache_stats none;
  assert_int_equal(xrt_client_get_cache_stats(c, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_client_get_cache_stats(NULL, &none),
                   XRT_INVALID_ARGUMENT);
  xrt_client_release(c);
}

static void test_disable_and_off(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  xrt_compile_options o = opts();
  o.cache_disable = 1;
  xrt_executable *a = compile_o(c, kAdd, &o), *b = compile_o(c, kAdd, &o);
  assert_int_equal(stats(c).compiles, 2);
  xrt_cache_stats cs = cstats(c);
  assert_int_equal(cs.hits + cs.misses + cs.entries, 0);
  assert_affine(c, a, 1);
  assert_affine(c, b, 1);
  xrt_executable_release(a);
  xrt_executable_release(b);
  xrt_client_release(c);
  /* compile_cache_bytes 0: no in-memory cache. */
  xrt_client_options co;
  xrt_client_options_init(&co);
  assert_int_equal(co.compile_cache_bytes, (size_t)256 << 20);
  co.compile_cache_bytes = 0;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  a = compile_o(c, kAdd, NULL);
  b = compile_o(c, kAdd, NULL);
  assert_int_equal(stats(c).compiles, 2);
  assert_int_equal(cstats(c).hits, 0);
  xrt_executable_release(a);
  xrt_executable_release(b);
  xrt_client_release(c);
}

typedef struct race {
  xrt_client *c;
  pthread_barrier_t *go;
  xrt_executable *e;
  xrt_status s;
} race;

static void *race_compile(void *arg) {
  race *r = (race *)arg;
  pthread_barrier_wait(r->go);
  r->s = xrt_compile(r->c, kAddLoc, strlen(kAddLoc), NULL, &r->e);
  return NULL;
}

static void test_eight_threads_compile_once(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, 8);
  race r[8];
  pthread_t t[8];
  for (int i = 0; i < 8; i++) {
    r[i] = (race){c, &go, NULL, XRT_UNKNOWN};
    assert_int_equal(pthread_create(&t[i], NULL, race_compile, &r[i]), 0);
  }
  for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&go);
  for (int i = 0; i < 8; i++) assert_int_equal(r[i].s, XRT_OK);
  xrt_client_stats s = stats(c);
  xrt_cache_stats cs = cstats(c);
  assert_int_equal(s.compiles, 1);
  assert_int_equal(s.compile_cache_hits, 7);
  assert_int_equal(cs.misses, 1);
  assert_int_equal(cs.hits, 7);
  assert_int_equal(cs.entries, 1);
  /* Every handle is its own and computes the sum; odd ones go first. */
  for (int i = 0; i < 8; i++) assert_affine(c, r[i].e, 1);
  for (int i = 1; i < 8; i += 2)
    assert_int_equal(xrt_executable_release(r[i].e), XRT_OK);
  for (int i = 0; i < 8; i += 2) {
    assert_affine(c, r[i].e, 1);
    assert_int_equal(xrt_executable_release(r[i].e), XRT_OK);
  }
  xrt_client_release(c);
}

static void test_failures_remembered(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  const char *bad =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<5xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n";
  char first[2048];
  for (int i = 0; i < 3; i++) {
    xrt_executable *e = (xrt_executable *)&first; /* overwritten with NULL */
    xrt_status s = xrt_compile(c, bad, strlen(bad), NULL, &e);
    assert_int_equal(s, XRT_INVALID_ARGUMENT);
    assert_null(e);
    if (i == 0) snprintf(first, sizeof first, "%s", xrt_last_error());
    else assert_string_equal(xrt_last_error(), first);
  }
  TU_ASSERT_CONTAINS(first, "<input>:2:");
  xrt_cache_stats cs = cstats(c);
  assert_int_equal(cs.misses, 1);
  assert_int_equal(cs.hits, 2);
  assert_int_equal(cs.failures_cached, 1);
  assert_int_equal(cs.entries, 1);
  /* So is a launch the client cannot hold. */
  const char *no_entry = kAdd;
  xrt_compile_options o = opts();
  o.num_replicas = 2; /* more devices than the client has */
  for (int i = 0; i < 2; i++) {
    xrt_executable *e = NULL;
    assert_int_equal(xrt_compile(c, no_entry, strlen(no_entry), &o, &e),
                     XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(xrt_last_error(), "need 2 devices");
  }
  /* A missing host function is not remembered: registering it fixes the
   * next compile. */
  const char *call =
      "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> "
      "tensor<4xf32> {\n"
      "  %0 = stablehlo.custom_call @cache_test_fn(%a, %b) : (tensor<4xf32>, "
      "tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n";
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, call, strlen(call), NULL, &e),
                   XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(xrt_last_error(), "cache_test_fn");
  assert_int_equal(cstats(c).failures_cached, 2);
  xrt_client_release(c);
}

/* Host functions of the rebinding test: out = a * k + b. */
static xrt_status host_affine(void *user, xrt_host_call *call) {
  float k = *(const float *)user;
  const float *a = (const float *)call->inputs[0].data;
  const float *b = (const float *)call->inputs[1].data;
  float *o = (float *)call->outputs[0].data;
  for (int i = 0; i < 4; i++) o[i] = a[i] * k + b[i];
  return XRT_OK;
}

static void test_host_functions_rebound(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  const char *call =
      "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> "
      "tensor<4xf32> {\n"
      "  %0 = stablehlo.custom_call @cache_test_fn(%a, %b) : (tensor<4xf32>, "
      "tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n"
      "}\n";
  float two = 2, three = 3;
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, call, strlen(call), NULL, &e),
                   XRT_NOT_FOUND);
  assert_int_equal(xrt_client_register_host_function(c, "cache_test_fn",
                                                     host_affine, &two),
                   XRT_OK);
  xrt_executable *e2 = compile_o(c, call, NULL);
  xrt_executable *e2b = compile_o(c, call, NULL); /* a hit */
  assert_int_equal(stats(c).compiles, 1); /* the failure was before it */
  assert_affine(c, e2, 2);
  assert_affine(c, e2b, 2);
  /* Registered again: a new compile binds the new function, the old
   * executables keep theirs. */
  assert_int_equal(xrt_client_register_host_function(c, "cache_test_fn",
                                                     host_affine, &three),
                   XRT_OK);
  xrt_executable *e3 = compile_o(c, call, NULL);
  assert_int_equal(stats(c).compiles, 2);
  assert_affine(c, e3, 3);
  assert_affine(c, e2, 2);
  xrt_executable *e3b = compile_o(c, call, NULL);
  assert_int_equal(stats(c).compiles, 2);
  assert_affine(c, e3b, 3);
  xrt_executable_release(e2);
  xrt_executable_release(e3);
  xrt_executable_release(e2b);
  xrt_executable_release(e3b);
  xrt_client_release(c);
}

/* Runs an rng program (no inputs, 8 floats out) into out. */
static void run_rng(xrt_client *c, xrt_executable *e, float *out) {
  xrt_device *d = xrt_client_device(c, 0);
  xrt_buffer *res = NULL;
  if (xrt_execute(e, d, NULL, 0, &res, 1, NULL) != XRT_OK)
    fail_msg("execute: %s", xrt_last_error());
  assert_int_equal(xrt_buffer_to_host(res, out, 8 * sizeof(float)), XRT_OK);
  xrt_buffer_release(res);
}

/* stablehlo.rng draws a new sequence each run of an executable: each
 * compile gets an executable of its own, starting where a fresh one does. */
static void test_stateful_programs_not_shared(void **state) {
  (void)state;
  const char *rng =
      "func.func @main() -> tensor<8xf32> {\n"
      "  %a = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %b = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "  %s = stablehlo.constant dense<[8]> : tensor<1xi64>\n"
      "  %0 = stablehlo.rng %a, %b, %s, distribution = UNIFORM : "
      "(tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<8xf32>\n"
      "  func.return %0 : tensor<8xf32>\n}\n";
  xrt_client *c = tu_client(1, 1, 0);
  float first[8], second[8], again[8];
  xrt_executable *e1 = compile_o(c, rng, NULL);
  run_rng(c, e1, first);
  run_rng(c, e1, second);
  assert_memory_not_equal(first, second, sizeof first);
  xrt_executable *e2 = compile_o(c, rng, NULL);
  run_rng(c, e2, again);
  assert_memory_equal(first, again, sizeof first);
  assert_int_equal(stats(c).compiles, 2);
  assert_int_equal(cstats(c).hits, 0);
  xrt_executable_release(e1);
  xrt_executable_release(e2);
  xrt_client_release(c);
}

static xrt_client *budget_client(size_t budget) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.compile_cache_bytes = budget;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  return c;
}

static void compile_release(xrt_client *c, const char *text) {
  xrt_executable_release(compile_o(c, text, NULL));
}

static void test_lru_eviction_by_bytes(void **state) {
  (void)state;
  char t[4][1024];
  for (int i = 0; i < 4; i++) affine_text(t[i], sizeof t[i], i + 2);
  /* What one entry costs (the programs differ only in a digit). */
  xrt_client *probe = budget_client((size_t)1 << 30);
  compile_release(probe, t[0]);
  uint64_t one = cstats(probe).bytes;
  compile_release(probe, t[1]);
  assert_int_equal(cstats(probe).bytes, 2 * one);
  xrt_client_release(probe);
  assert_true(one > 0);
  /* Room for two and a half. */
  xrt_client *c = budget_client((size_t)(2 * one + one / 2));
  compile_release(c, t[0]);
  compile_release(c, t[1]);
  compile_release(c, t[0]); /* t[0] is now the most recent */
  assert_int_equal(cstats(c).evictions, 0);
  compile_release(c, t[2]); /* evicts t[1], the least recently used */
  xrt_cache_stats cs = cstats(c);
  assert_int_equal(cs.evictions, 1);
  assert_int_equal(cs.entries, 2);
  assert_int_equal(cs.bytes, 2 * one);
  uint64_t compiles = stats(c).compiles;
  compile_release(c, t[0]); /* kept */
  compile_release(c, t[2]); /* kept */
  assert_int_equal(stats(c).compiles, compiles);
  compile_release(c, t[1]); /* evicted: compiled again, evicts t[0] */
  assert_int_equal(stats(c).compiles, compiles + 1);
  assert_int_equal(cstats(c).evictions, 2);
  xrt_executable *e = compile_o(c, t[1], NULL);
  assert_int_equal(stats(c).compiles, compiles + 1);
  assert_affine(c, e, 3);
  xrt_executable_release(e);
  xrt_client_release(c);
  /* An entry larger than the budget is not kept. */
  c = budget_client((size_t)(one / 2));
  compile_release(c, t[0]);
  compile_release(c, t[0]);
  assert_int_equal(stats(c).compiles, 2);
  assert_int_equal(cstats(c).entries, 0);
  xrt_client_release(c);
}

/* ---- the persistent store ---- */

static void test_store_round_trip(void **state) {
  (void)state;
  xrt_context *x = wrap_context();
  map_store m;
  map_init(&m);
  g_text = kAddMod;
  g_serialized = g_deserialized = 0;
  /* The first client compiles and saves. */
  xrt_client *c1 = store_client(x, "simwrap", &m, (size_t)1 << 20);
  xrt_executable *e1 = compile_o(c1, kAddMod, NULL);
  xrt_cache_stats cs = cstats(c1);
  assert_int_equal(cs.store_misses, 1);
  assert_int_equal(cs.store_writes, 1);
  assert_int_equal(cs.store_hits + cs.store_errors, 0);
  assert_int_equal(m.saves, 2); /* the executable, then its alias */
  assert_int_equal(g_serialized, 1);
  char key[33];
  key_of(c1, kAddMod, NULL, key);
  assert_string_equal(m.e[0].key, key);
  /* The alias: "a-" and 30 hex digits, naming the key. */
  assert_int_equal(strlen(m.e[1].key), 32);
  assert_memory_equal(m.e[1].key, "a-", 2);
  assert_int_equal(strspn(m.e[1].key + 2, "0123456789abcdef"), 30);
  assert_int_equal(m.e[1].size, 32);
  assert_memory_equal(m.e[1].data, key, 32);
  char who[160];
  snprintf(who, sizeof who, "simwrap %s", g_sim->version);
  assert_string_equal(m.e[0].who, who);
  assert_affine(c1, e1, 1);
  /* A second client loads it: no compile, and it runs. */
  xrt_client *c2 = store_client(x, "simwrap", &m, (size_t)1 << 20);
  xrt_executable *e2 = compile_o(c2, kAddLoc, NULL);
  assert_int_equal(stats(c2).compiles, 0);
  cs = cstats(c2);
  assert_int_equal(cs.store_hits, 1);
  assert_int_equal(cs.misses, 1);
  assert_int_equal(cs.store_writes, 0);
  assert_int_equal(g_deserialized, 1);
  assert_int_equal(m.releases, 1);
  assert_int_equal(m.saves, 3); /* kAddLoc's alias, as it had none */
  assert_int_equal(xrt_executable_num_inputs(e2), 2);
  assert_int_equal(xrt_executable_num_outputs(e2), 1);
  assert_string_equal(xrt_executable_name(e2), "main");
  xrt_shape sh;
  assert_int_equal(xrt_executable_input_shape(e2, 1, &sh), XRT_OK);
  assert_int_equal(sh.dtype, XRT_F32);
  assert_int_equal(sh.rank, 1);
  assert_int_equal(sh.dims[0], 4);
  assert_affine(c2, e2, 1);
  /* ... and keeps it in memory. */
  xrt_executable *e3 = compile_o(c2, kAddMod, NULL);
  assert_int_equal(cstats(c2).hits, 1);
  /* Loads: each client's alias of its first text (none yet), the key
   * (a miss, then a hit), and now kAddMod's alias naming that key. */
  assert_int_equal(m.loads, 5);
  assert_int_equal(m.releases, 2);
  xrt_executable_release(e2);
  assert_affine(c2, e3, 1);
  xrt_executable_release(e3);
  xrt_executable_release(e1);
  xrt_client_release(c2);
  xrt_client_release(c1);
  /* With compile_cache_bytes 0 the store alone answers. */
  xrt_client *c3 = store_client(x, "simwrap", &m, 0);
  e1 = compile_o(c3, kAddMod, NULL);
  e2 = compile_o(c3, kAddMod, NULL);
  assert_int_equal(stats(c3).compiles, 0);
  assert_int_equal(cstats(c3).store_hits, 2);
  assert_affine(c3, e1, 1);
  assert_affine(c3, e2, 1);
  xrt_executable_release(e1);
  xrt_executable_release(e2);
  xrt_client_release(c3);
  map_free(&m);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* The simulator itself (ABI 1.1) through the store: the second client
 * loads what the first compiled and computes the same. */
static void test_store_with_the_simulator(void **state) {
  (void)state;
  map_store m;
  map_init(&m);
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.cache_store = &m.store;
  char text[1024];
  affine_text(text, sizeof text, 5);
  xrt_client *c1 = NULL, *c2 = NULL;
  assert_int_equal(xrt_client_create(&o, &c1), XRT_OK);
  xrt_executable *e1 = compile_o(c1, text, NULL);
  assert_int_equal(cstats(c1).store_writes, 1);
  assert_int_equal(m.n, 2); /* and its alias */
  assert_int_equal(xrt_client_create(&o, &c2), XRT_OK);
  xrt_executable *e2 = compile_o(c2, text, NULL);
  assert_int_equal(cstats(c2).store_hits, 1);
  assert_int_equal(stats(c2).compiles, 0);
  assert_affine(c2, e2, 5);
  assert_affine(c1, e1, 5);
  xrt_executable_release(e1);
  xrt_executable_release(e2);
  xrt_client_release(c2);
  xrt_client_release(c1);
  map_free(&m);
}

/* Replaces the stored payload with damaged bytes and checks a fresh
 * client compiles (one store error) and computes the right values. */
static void expect_fallback(xrt_context *x, map_store *m,
                            const unsigned char *bytes, size_t n) {
  free(m->e[0].data);
  m->e[0].data = (unsigned char *)malloc(n ? n : 1);
  if (n) memcpy(m->e[0].data, bytes, n);
  m->e[0].size = n;
  xrt_client *c = store_client(x, "simwrap", m, (size_t)1 << 20);
  xrt_executable *e = compile_o(c, kAdd, NULL);
  xrt_cache_stats cs = cstats(c);
  assert_int_equal(cs.store_errors, 1);
  assert_int_equal(cs.store_hits, 0);
  assert_int_equal(stats(c).compiles, 1);
  assert_int_equal(cs.store_writes, 1); /* the fresh compile replaces it */
  assert_affine(c, e, 1);
  xrt_executable_release(e);
  xrt_client_release(c);
}

static void quiet_log(void *user, xrt_log_level level, const char *component,
                      const char *message) {
  int *warnings = (int *)user;
  if (level == XRT_LOG_WARN && !strcmp(component, "cache") &&
      strstr(message, "compiling instead"))
    (*warnings)++;
}

static void test_store_damaged_payload_falls_back(void **state) {
  (void)state;
  xrt_context *x = wrap_context();
  map_store m;
  map_init(&m);
  g_text = kAdd;
  int warnings = 0;
  xrt_log_set_callback(quiet_log, &warnings);
  xrt_client *c = store_client(x, "simwrap", &m, (size_t)1 << 20);
  compile_release(c, kAdd);
  xrt_client_release(c);
  assert_int_equal(m.n, 2); /* the executable and its alias */
  size_t n = m.e[0].size;
  unsigned char *good = (unsigned char *)malloc(n);
  memcpy(good, m.e[0].data, n);
  unsigned char *bad = (unsigned char *)malloc(n + 8);
  int cases = 0;
  /* Truncated anywhere, and empty. */
  for (size_t cut = 0; cut < n; cut += (cut < 64 ? 1 : 97)) {
    expect_fallback(x, &m, good, cut);
    cases++;
  }
  /* Every header byte flipped, one at a time. */
  for (size_t i = 0; i < 40; i++) {
    memcpy(bad, good, n);
    bad[i] ^= 0x5a;
    expect_fallback(x, &m, bad, n);
    cases++;
  }
  /* Trailing bytes. */
  memcpy(bad, good, n);
  memset(bad + n, 7, 8);
  expect_fallback(x, &m, bad, n + 8);
  /* The plugin's own bytes damaged: the plugin refuses them. */
  memcpy(bad, good, n);
  memcpy(bad + n - strlen(kAdd) - 4, "JUNK", 4);
  expect_fallback(x, &m, bad, n);
  assert_int_equal(warnings, cases + 2);
  /* A store that fails a load: an error, then a compile. */
  m.load_status = XRT_DATA_LOSS;
  c = store_client(x, "simwrap", &m, (size_t)1 << 20);
  xrt_executable *e = compile_o(c, kAdd, NULL);
  assert_int_equal(cstats(c).store_errors, 1);
  assert_int_equal(stats(c).compiles, 1);
  assert_affine(c, e, 1);
  xrt_executable_release(e);
  xrt_client_release(c);
  /* The intact payload still loads. */
  m.load_status = XRT_OK;
  memcpy(m.e[0].data, good, n);
  m.e[0].size = n;
  c = store_client(x, "simwrap", &m, (size_t)1 << 20);
  e = compile_o(c, kAdd, NULL);
  assert_int_equal(stats(c).compiles, 0);
  assert_int_equal(cstats(c).store_hits, 1);
  assert_affine(c, e, 1);
  xrt_executable_release(e);
  xrt_client_release(c);
  xrt_log_set_callback(NULL, NULL);
  free(good);
  free(bad);
  map_free(&m);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static void test_store_needs_abi_1_1(void **state) {
  (void)state;
  xrt_context *x = wrap_context();
  map_store m;
  map_init(&m);
  xrt_client *c = store_client(x, "simold", &m, (size_t)1 << 20);
  xrt_executable *e = compile_o(c, kAdd, NULL);
  assert_affine(c, e, 1);
  assert_int_equal(m.loads + m.saves, 0);
  xrt_cache_stats cs = cstats(c);
  assert_int_equal(cs.store_hits + cs.store_misses + cs.store_writes +
                       cs.store_errors, 0);
  assert_int_equal(cs.misses, 1);
  xrt_executable_release(e);
  xrt_client_release(c);
  /* A store with missing functions is refused at client creation. */
  m.store.save = NULL;
  xrt_client_options o = tu_client_options(x, "simwrap", 1);
  o.cache_store = &m.store;
  assert_int_equal(xrt_client_create(&o, &c), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "cache_store");
  map_free(&m);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* ---- logging ---- */

typedef struct log_lines {
  char lines[8][256];
  int n;
} log_lines;

static void keep_log(void *user, xrt_log_level level, const char *component,
                     const char *message) {
  log_lines *l = (log_lines *)user;
  if (level == XRT_LOG_INFO && !strcmp(component, "cache") && l->n < 8)
    snprintf(l->lines[l->n++], sizeof l->lines[0], "%s", message);
}

static void test_log_hit_and_miss(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  log_lines l;
  memset(&l, 0, sizeof l);
  assert_int_equal(xrt_log_configure("info,cache"), XRT_OK);
  xrt_log_set_callback(keep_log, &l);
  compile_release(c, kAdd);
  compile_release(c, kAdd);
  xrt_log_set_callback(NULL, NULL);
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
  char key[33], want[128];
  key_of(c, kAdd, NULL, key);
  assert_int_equal(l.n, 2);
  snprintf(want, sizeof want, "cache miss %s @main", key);
  assert_string_equal(l.lines[0], want);
  snprintf(want, sizeof want, "cache hit %s @main", key);
  assert_string_equal(l.lines[1], want);
  xrt_client_release(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_key_ignores_locations_and_comments),
      cmocka_unit_test(test_key_reads_like_the_reference),
      cmocka_unit_test(test_key_options_and_topology),
      cmocka_unit_test(test_key_plugins),
      cmocka_unit_test(test_hit_shares_and_handles_are_independent),
      cmocka_unit_test(test_disable_and_off),
      cmocka_unit_test(test_eight_threads_compile_once),
      cmocka_unit_test(test_failures_remembered),
      cmocka_unit_test(test_host_functions_rebound),
      cmocka_unit_test(test_stateful_programs_not_shared),
      cmocka_unit_test(test_lru_eviction_by_bytes),
      cmocka_unit_test(test_store_round_trip),
      cmocka_unit_test(test_store_with_the_simulator),
      cmocka_unit_test(test_store_damaged_payload_falls_back),
      cmocka_unit_test(test_store_needs_abi_1_1),
      cmocka_unit_test(test_log_hit_and_miss),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
