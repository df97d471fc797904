/*
 * test_trace.c - logging and Chrome traces: a trace of transfers, a
 * compile, a two-device launch with an all_reduce, a device copy and a pmap
 * cache hit is read back with a strict JSON parser written here and
 * checked event by event; names are escaped; XRT_TRACE and XRT_LOG are
 * read from the environment (in a freshly exec'd copy of this program, as
 * xrt reads them once per process); log levels per component, callbacks
 * and bad specs.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, setenv, fork, exec */

#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* ---- a small strict JSON parser (RFC 8259) ---- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jkind;

typedef struct jval {
  jkind kind;
  double num;
  bool b;
  char *str;          /* J_STR: decoded UTF-8, NUL-terminated */
  int n;              /* J_ARR, J_OBJ: count */
  struct jval *items; /* J_ARR, J_OBJ: values */
  char **keys;        /* J_OBJ: keys */
} jval;

typedef struct jparser {
  const char *p, *end;
  const char *err;
  int depth;
} jparser;

static void jfree(jval *v) {
  free(v->str);
  for (int i = 0; i < v->n; i++) {
    jfree(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  memset(v, 0, sizeof *v);
}

static void jws(jparser *j) {
  while (j->p < j->end &&
         (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

static bool jfail(jparser *j, const char *why) {
  if (!j->err) j->err = why;
  return false;
}

static bool jlit(jparser *j, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
    return jfail(j, "bad literal");
  j->p += n;
  return true;
}

static int jhex4(jparser *j) {
  if (j->end - j->p < 4) return -1;
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = j->p[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  j->p += 4;
  return v;
}

static size_t jutf8(unsigned cp, char *out) {
  if (cp < 0x80) return out[0] = (char)cp, 1;
  if (cp < 0x800)
    return out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 63)),
           2;
  if (cp < 0x10000)
    return out[0] = (char)(0xE0 | cp >> 12),
           out[1] = (char)(0x80 | ((cp >> 6) & 63)),
           out[2] = (char)(0x80 | (cp & 63)), 3;
  out[0] = (char)(0xF0 | cp >> 18);
  out[1] = (char)(0x80 | ((cp >> 12) & 63));
  out[2] = (char)(0x80 | ((cp >> 6) & 63));
  out[3] = (char)(0x80 | (cp & 63));
  return 4;
}

/* A string (at '"'); raw bytes must be valid UTF-8 without controls. */
static bool jstring(jparser *j, char **out) {
  if (j->p >= j->end || *j->p != '"') return jfail(j, "expected a string");
  j->p++;
  size_t cap = (size_t)(j->end - j->p) + 1, n = 0;
  char *s = (char *)malloc(cap);
  if (!s) return jfail(j, "out of memory");
  while (j->p < j->end && *j->p != '"') {
    unsigned char c = (unsigned char)*j->p;
    if (c < 0x20) {
      free(s);
      return jfail(j, "control character in a string");
    }
    if (c != '\\') {
      s[n++] = (char)c;
      j->p++;
      continue;
    }
    if (++j->p >= j->end) break;
    char e = *j->p++;
    const char *simple = strchr("\"\\/bfnrt", e);
    if (e && simple) {
      static const char map[] = "\"\\/\b\f\n\r\t";
      s[n++] = map[simple - "\"\\/bfnrt"];
    } else if (e == 'u') {
      int cp = jhex4(j);
      if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
        int lo = j->end - j->p >= 2 && j->p[0] == '\\' && j->p[1] == 'u'
                     ? (j->p += 2, jhex4(j))
                     : -1;
        if (lo < 0xDC00 || lo > 0xDFFF) cp = -1;
        else cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        cp = -1;
      }
      if (cp < 0) {
        free(s);
        return jfail(j, "bad \\u escape");
      }
      n += jutf8((unsigned)cp, s + n);
    } else {
      free(s);
      return jfail(j, "bad escape");
    }
  }
  if (j->p >= j->end) {
    free(s);
    return jfail(j, "unterminated string");
  }
  j->p++;
  s[n] = 0;
  /* Raw bytes must form valid UTF-8. */
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    size_t k = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3
               : c >= 0xF0 && c < 0xF5 ? 4 : 0;
    for (size_t m = 1; k && m < k; m++)
      if (i + m >= n || ((unsigned char)s[i + m] & 0xC0) != 0x80) k = 0;
    if (!k) {
      free(s);
      return jfail(j, "invalid UTF-8 in a string");
    }
    i += k;
  }
  *out = s;
  return true;
}

static bool jnumber(jparser *j, double *out) {
  const char *s = j->p;
  if (j->p < j->end && *j->p == '-') j->p++;
  if (j->p >= j->end) return jfail(j, "bad number");
  if (*j->p == '0') j->p++;
  else if (*j->p >= '1' && *j->p <= '9')
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
  else return jfail(j, "bad number");
  if (j->p < j->end && *j->p == '.') {
    j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9')
      return jfail(j, "bad fraction");
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
  }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
    j->p++;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9')
      return jfail(j, "bad exponent");
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
  }
  char tmp[64];
  size_t len = (size_t)(j->p - s);
  if (len >= sizeof tmp) return jfail(j, "number too long");
  memcpy(tmp, s, len);
  tmp[len] = 0;
  *out = strtod(tmp, NULL);
  return true;
}

static bool jvalue(jparser *j, jval *v);

static bool jpush(jval *v, jval *item, char *key) {
  jval *items = (jval *)realloc(v->items, sizeof *items * (size_t)(v->n + 1));
  if (!items) return false;
  v->items = items;
  if (v->kind == J_OBJ) {
    char **keys = (char **)realloc(v->keys, sizeof *keys * (size_t)(v->n + 1));
    if (!keys) return false;
    v->keys = keys;
    keys[v->n] = key;
  }
  items[v->n++] = *item;
  return true;
}

/* An array or object (at '[' or '{'). */
static bool jcontainer(jparser *j, jval *v, bool obj) {
  v->kind = obj ? J_OBJ : J_ARR;
  if (++j->depth > 64) return jfail(j, "nested too deep");
  j->p++;
  jws(j);
  char close = obj ? '}' : ']';
  if (j->p < j->end && *j->p == close) {
    j->p++;
    j->depth--;
    return true;
  }
  for (;;) {
    char *key = NULL;
    jval item;
    memset(&item, 0, sizeof item);
    jws(j);
    if (obj) {
      if (!jstring(j, &key)) return false;
      jws(j);
      if (j->p >= j->end || *j->p != ':') {
        free(key);
        return jfail(j, "expected ':'");
      }
      j->p++;
    }
    if (!jvalue(j, &item) || !jpush(v, &item, key)) {
      free(key);
      jfree(&item);
      return jfail(j, "bad member");
    }
    jws(j);
    if (j->p < j->end && *j->p == ',') {
      j->p++;
      continue;
    }
    if (j->p < j->end && *j->p == close) {
      j->p++;
      j->depth--;
      return true;
    }
    return jfail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static bool jvalue(jparser *j, jval *v) {
  memset(v, 0, sizeof *v);
  jws(j);
  if (j->p >= j->end) return jfail(j, "unexpected end");
  switch (*j->p) {
  case '{': return jcontainer(j, v, true);
  case '[': return jcontainer(j, v, false);
  case '"': v->kind = J_STR; return jstring(j, &v->str);
  case 't': v->kind = J_BOOL; v->b = true; return jlit(j, "true");
  case 'f': v->kind = J_BOOL; return jlit(j, "false");
  case 'n': v->kind = J_NULL; return jlit(j, "null");
  default: v->kind = J_NUM; return jnumber(j, &v->num);
  }
}

/* Parses a whole document; fails the test with the reason if invalid. */
static void jparse_doc(const char *text, size_t len, jval *out) {
  jparser j = {text, text + len, NULL, 0};
  bool ok = jvalue(&j, out);
  jws(&j);
  if (ok && j.p != j.end) ok = jfail(&j, "text after the value");
  if (!ok)
    fail_msg("invalid JSON at byte %ld: %s", (long)(j.p - text), j.err);
}

static const jval *jget(const jval *obj, const char *key) {
  if (!obj || obj->kind != J_OBJ) return NULL;
  for (int i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
  return NULL;
}

static const char *jstr(const jval *obj, const char *key) {
  const jval *v = jget(obj, key);
  return v && v->kind == J_STR ? v->str : NULL;
}

static double jnum(const jval *obj, const char *key, double dflt) {
  const jval *v = jget(obj, key);
  return v && v->kind == J_NUM ? v->num : dflt;
}

/* The parser itself: valid documents, and invalid ones it must reject. */
static void test_json_parser(void **state) {
  (void)state;
  jval v;
  const char *ok = " {\"a\": [1, -2.5e+3, 0.25, true, false, null],"
                   " \"s\": \"q\\\"b\\\\s\\/\\n\\u00e9\\ud83d\\ude00\"} ";
  jparse_doc(ok, strlen(ok), &v);
  const jval *a = jget(&v, "a");
  assert_non_null(a);
  assert_int_equal(a->n, 6);
  assert_true(a->items[1].num == -2500.0 && a->items[2].num == 0.25);
  assert_true(a->items[3].kind == J_BOOL && a->items[3].b);
  assert_int_equal(a->items[5].kind, J_NULL);
  assert_string_equal(jstr(&v, "s"), "q\"b\\s/\n\xc3\xa9\xf0\x9f\x98\x80");
  jfree(&v);
  static const char *const bad[] = {
      "{\"a\":1,}", "[1 2]", "{'a':1}", "[01]", "[1.]", "\"\\x\"",
      "[\"a\nb\"]", "{\"a\"}", "[1]]", "\"\\ud800\"", "[\"\xff\"]", "-",
      "[1e]", "tru", "",
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    jparser j = {bad[i], bad[i] + strlen(bad[i]), NULL, 0};
    memset(&v, 0, sizeof v);
    bool parsed = jvalue(&j, &v);
    jws(&j);
    if (parsed && j.p == j.end) fail_msg("accepted invalid JSON: %s", bad[i]);
    jfree(&v);
  }
}

/* ---- reading a trace ---- */


/* Parses a trace file: {"traceEvents":[...]}; returns the document. */
static void load_trace(const char *path, jval *doc, const jval **events) {
  size_t len;
  char *text = tu_read_file(path, &len);
  jparse_doc(text, len, doc);
  free(text);
  assert_int_equal(doc->kind, J_OBJ);
  *events = jget(doc, "traceEvents");
  assert_non_null(*events);
  assert_int_equal((*events)->kind, J_ARR);
  /* Every event is well formed. */
  for (int i = 0; i < (*events)->n; i++) {
    const jval *e = &(*events)->items[i];
    const char *ph = jstr(e, "ph");
    assert_non_null(ph);
    assert_non_null(jstr(e, "name"));
    assert_true(jnum(e, "pid", -1) >= 0 && jnum(e, "tid", -1) >= 0);
    if (strcmp(ph, "X") == 0) {
      assert_non_null(jstr(e, "cat"));
      assert_true(jnum(e, "ts", -1) >= 0);
      assert_true(jnum(e, "dur", -1) >= 0);
    } else {
      assert_string_equal(ph, "M");
      assert_non_null(jget(e, "args"));
    }
  }
}

/* Number of "X" events of cat named name (NULL: any) on pid/tid (-1: any). */
static int count_events(const jval *events, const char *cat, const char *name,
                        int pid, int tid) {
  int n = 0;
  for (int i = 0; i < events->n; i++) {
    const jval *e = &events->items[i];
    if (strcmp(jstr(e, "ph"), "X") != 0) continue;
    if (cat && strcmp(jstr(e, "cat"), cat) != 0) continue;
    if (name && strcmp(jstr(e, "name"), name) != 0) continue;
    if (pid >= 0 && jnum(e, "pid", -1) != pid) continue;
    if (tid >= 0 && jnum(e, "tid", -1) != tid) continue;
    n++;
  }
  return n;
}

/* The "M" event what (process_name, thread_name) of pid/tid: its name. */
static const char *meta_name(const jval *events, const char *what, int pid,
                             int tid) {
  for (int i = 0; i < events->n; i++) {
    const jval *e = &events->items[i];
    if (strcmp(jstr(e, "ph"), "M") == 0 && strcmp(jstr(e, "name"), what) == 0 &&
        jnum(e, "pid", -1) == pid && jnum(e, "tid", -1) == tid)
      return jstr(jget(e, "args"), "name");
  }
  return NULL;
}

/* The pid of the process named "xrt client N (sim)" with the most
 * devices named (-1 if none), checking the name matches the pid. */
static int client_pid(const jval *events, int num_devices) {
  for (int i = 0; i < events->n; i++) {
    const jval *e = &events->items[i];
    if (strcmp(jstr(e, "ph"), "M") != 0 ||
        strcmp(jstr(e, "name"), "process_name") != 0)
      continue;
    int pid = (int)jnum(e, "pid", -1);
    char want[64];
    snprintf(want, sizeof want, "xrt client %d (sim)", pid);
    assert_string_equal(jstr(jget(e, "args"), "name"), want);
    char dev[32];
    snprintf(dev, sizeof dev, "device %d", num_devices - 1);
    const char *last = meta_name(events, "thread_name", pid, num_devices);
    if (last && strcmp(last, dev) == 0 &&
        !meta_name(events, "thread_name", pid, num_devices + 1))
      return pid;
  }
  return -1;
}

static void temp_path(char *path, size_t cap, const char *tag) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, cap, "%s/xrt_%s_XXXXXX", dir && *dir ? dir : "/tmp", tag);
  int fd = mkstemp(path);
  if (fd < 0) fail_msg("mkstemp: %s", strerror(errno));
  close(fd);
}

/* ---- the trace of a small workload ---- */

/* The module's name holds a quote and a backslash (kept as written). */
static const char *allreduce2 =
    "module @\"q\\\"uo\\\\te\" attributes {mhlo.num_replicas = 2 : i32} {\n"
    "func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
    "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
    "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
    "    %s = stablehlo.add %x, %y : tensor<i32>\n"
    "    stablehlo.return %s : tensor<i32>\n"
    "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}\n"
    "    : (tensor<2xi32>) -> tensor<2xi32>\n"
    "  return %r : tensor<2xi32>\n"
    "}\n}\n";
#define MODULE_ENTRY "q\\\"uo\\\\te.main"

static const char *add4 =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  func.return %0 : tensor<4xf32>\n"
    "}\n";

/* Two pmap calls over devices 0 and 1: x [2][4] Unstacked, y [4]
 * replicated; checks out[k][j] = x[k][j] + y[j] both times. */
static void pmap_twice(xrt_client *c) {
  xrt_pmap *p = tu_pmap(c, add4);
  float x[8], y[4];
  for (int i = 0; i < 8; i++) x[i] = (float)(10 * (i / 4) + i % 4);
  for (int j = 0; j < 4; j++) y[j] = 0.5f * (float)j;
  xrt_device *devs[2] = {xrt_client_device(c, 0), xrt_client_device(c, 1)};
  xrt_sharding_spec sx, sy;
  xrt_sharding_spec_init(&sx, 2);
  sx.dims[0].kind = XRT_DIM_UNSTACKED;
  sx.dims[0].size = 2;
  sx.num_mesh_dims = 1;
  sx.mesh[0].kind = XRT_MESH_SHARDED_AXIS;
  sx.mesh[0].axis = 0;
  xrt_sharding_spec_init(&sy, 1);
  sy.num_mesh_dims = 1;
  sy.mesh[0].kind = XRT_MESH_REPLICATED;
  sy.mesh[0].replicas = 2;
  xrt_shape xs = TU_SHAPE(XRT_F32, 2, 4), ys = TU_SHAPE(XRT_F32, 4);
  xrt_sharded_array *xa = NULL, *ya = NULL;
  assert_int_equal(xrt_sharded_array_from_host(c, &xs, x, &sx, devs, 2, &xa),
                   XRT_OK);
  assert_int_equal(xrt_sharded_array_from_host(c, &ys, y, &sy, devs, 2, &ya),
                   XRT_OK);
  for (int call = 0; call < 2; call++) {
    xrt_sharded_array *args[2] = {xa, ya}, *out = NULL;
    xrt_event *done = NULL;
    if (xrt_pmap_call(p, args, 2, &out, 1, NULL, &done) != XRT_OK)
      fail_msg("pmap: %s", xrt_last_error());
    assert_int_equal(xrt_event_await(done), XRT_OK);
    xrt_event_release(done);
    float got[8];
    assert_int_equal(xrt_sharded_array_to_host(out, got, sizeof got), XRT_OK);
    for (int i = 0; i < 8; i++)
      assert_true(got[i] == x[i] + y[i % 4]);
    xrt_sharded_array_release(out);
  }
  assert_int_equal(xrt_pmap_num_compiled(p), 1);
  xrt_sharded_array_release(xa);
  xrt_sharded_array_release(ya);
  xrt_pmap_release(p);
}

/* h2d on both devices, compile, the launch, d2h, a device copy and pmap. */
static void traced_workload(xrt_client *c) {
  xrt_executable *e = tu_compile(c, allreduce2, 0, NULL);
  int32_t in[2][2] = {{3, -4}, {40, 7}};
  xrt_shape sh = TU_SHAPE(XRT_S32, 2);
  xrt_buffer *args[2][1], *outs[2][1];
  for (int d = 0; d < 2; d++)
    assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, d), &sh,
                                          in[d], &args[d][0]), XRT_OK);
  xrt_buffer *const *lists[2] = {args[0], args[1]};
  xrt_buffer **olists[2] = {outs[0], outs[1]};
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_multi(e, lists, 2, 1, olists, 1, NULL, &done),
                   XRT_OK);
  if (xrt_event_await(done) != XRT_OK) fail_msg("%s", xrt_last_error());
  xrt_event_release(done);
  for (int d = 0; d < 2; d++) {
    int32_t r[2];
    assert_int_equal(xrt_buffer_to_host(outs[d][0], r, sizeof r), XRT_OK);
    for (int i = 0; i < 2; i++) assert_int_equal(r[i], in[0][i] + in[1][i]);
  }
  xrt_buffer *copy = NULL;
  assert_int_equal(xrt_buffer_copy_to_device(outs[0][0],
                                             xrt_client_device(c, 1), &copy),
                   XRT_OK);
  int32_t r[2];
  assert_int_equal(xrt_buffer_to_host(copy, r, sizeof r), XRT_OK);
  assert_int_equal(r[0], 43);
  assert_int_equal(r[1], 3);
  xrt_buffer_release(copy);
  for (int d = 0; d < 2; d++) {
    xrt_buffer_release(args[d][0]);
    xrt_buffer_release(outs[d][0]);
  }
  xrt_executable_release(e);
  pmap_twice(c);
}

/* Events on device d's track (tid d + 1) of the client's pid. */
static void check_device_track(const jval *ev, int pid, int d) {
  int tid = d + 1;
  /* from_host of in[d], the pmap's two pieces of x and its y */
  assert_true(count_events(ev, "transfer", "h2d 2xi32", pid, tid) >= 1);
  assert_true(count_events(ev, "transfer", "h2d 4xf32", pid, tid) >= 2);
  assert_int_equal(count_events(ev, "execute", MODULE_ENTRY, pid, tid), 1);
  assert_int_equal(count_events(ev, "collective", "all_reduce", pid, tid), 1);
  assert_true(count_events(ev, "transfer", "d2h 2xi32", pid, tid) >= 1);
  assert_int_equal(count_events(ev, "execute", "main", pid, tid), 2);
}

static void test_trace_workload(void **state) {
  (void)state;
  char path[512];
  temp_path(path, sizeof path, "trace");
  /* A client made before the trace starts still gets named tracks. */
  xrt_client *c = tu_client(2, 0, (uint64_t)1 << 26);
  assert_false(xrt_trace_enabled());
  assert_int_equal(xrt_trace_start(path), XRT_OK);
  assert_true(xrt_trace_enabled());
  traced_workload(c);
  assert_int_equal(xrt_trace_stop(), XRT_OK);
  assert_false(xrt_trace_enabled());
  assert_int_equal(xrt_trace_stop(), XRT_OK); /* none in progress: nothing */
  /* Work after the trace stopped is not recorded (the file is final). */
  int32_t z[2] = {0, 0};
  xrt_shape sh = TU_SHAPE(XRT_S32, 2);
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, z,
                                        &b), XRT_OK);
  xrt_buffer_release(b);
  xrt_client_release(c);

  jval doc;
  const jval *ev;
  load_trace(path, &doc, &ev);
  int pid = client_pid(ev, 2);
  assert_true(pid > 0);
  assert_string_equal(meta_name(ev, "thread_name", pid, 0), "host");
  assert_string_equal(meta_name(ev, "thread_name", pid, 1), "device 0");
  assert_string_equal(meta_name(ev, "thread_name", pid, 2), "device 1");
  for (int d = 0; d < 2; d++) check_device_track(ev, pid, d);
  /* The module's compile, on the host track, escaped and decoded back. */
  assert_int_equal(count_events(ev, "compile", MODULE_ENTRY, pid, 0), 1);
  assert_int_equal(count_events(ev, "compile", "main", pid, 0), 1);
  /* The copy of device 0's result to device 1, on the source's track
   * (whose queue runs it). */
  assert_int_equal(count_events(ev, "transfer", "d2d 2xi32", pid, 1), 1);
  assert_int_equal(count_events(ev, "transfer", "d2d 2xi32", pid, 2), 0);
  /* The second pmap call found its executable in the cache. */
  assert_int_equal(count_events(ev, "cache", "pmap hit @main", pid, 0), 1);
  /* Nothing else: no event of another client, no unknown category. */
  int known = 0;
  static const char *const cats[] = {"transfer", "execute", "collective",
                                     "compile", "cache"};
  for (size_t i = 0; i < TU_COUNT(cats); i++)
    known += count_events(ev, cats[i], NULL, pid, -1);
  assert_int_equal(known, count_events(ev, NULL, NULL, -1, -1));
  /* Device 0 got one 2xi32 upload in the trace, the launch's argument:
   * the one after xrt_trace_stop is absent. */
  assert_int_equal(count_events(ev, "transfer", "h2d 2xi32", pid, 1), 1);
  jfree(&doc);
  unlink(path);
}

/* A client of ndev devices of 16 MiB, the trace started into a new
 * temporary file (its name in path). */
static xrt_client *traced_client(char *path, size_t cap, const char *tag,
                                 int ndev) {
  temp_path(path, cap, tag);
  xrt_client *c = tu_client(ndev, 0, (uint64_t)1 << 24);
  assert_int_equal(xrt_trace_start(path), XRT_OK);
  return c;
}

/* The escaped bytes: the module name's quote and backslash appear in the
 * file as \" and \\ (decoded above), and a byte that is not UTF-8 becomes
 * U+FFFD, so the file stays valid JSON. */
static void test_trace_escaping(void **state) {
  (void)state;
  char path[512];
  xrt_client *c = traced_client(path, sizeof path, "esc", 1);
  const char *src =
      "module @\"a\\\\b\xff\x01\" {\n"
      "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
      "  func.return %a : tensor<f32>\n"
      "}\n}\n";
  xrt_executable_release(tu_compile(c, src, 0, NULL));
  xrt_client_release(c);
  assert_int_equal(xrt_trace_stop(), XRT_OK);
  size_t len;
  char *text = tu_read_file(path, &len);
  assert_non_null(strstr(text, "\"name\":\"a\\\\\\\\b\\ufffd\\u0001.main\""));
  free(text);
  jval doc;
  const jval *ev;
  load_trace(path, &doc, &ev);
  assert_int_equal(count_events(ev, "compile",
                                "a\\\\b\xef\xbf\xbd\x01.main", -1, 0), 1);
  jfree(&doc);
  unlink(path);
}

/* Threads transferring at once: every event is recorded once, the file
 * (many buffer flushes long) is valid JSON. */
typedef struct xfer_job {
  xrt_client *c;
  int device, count;
  int failures;
} xfer_job;

static void *xfer_thread(void *arg) {
  xfer_job *j = (xfer_job *)arg;
  float v[3] = {1, 2, 3};
  xrt_shape sh = TU_SHAPE(XRT_F32, 3);
  for (int i = 0; i < j->count; i++) {
    xrt_buffer *b = NULL;
    float back[3] = {0, 0, 0};
    if (xrt_buffer_from_host(j->c, xrt_client_device(j->c, j->device), &sh, v,
                             &b) ||
        xrt_buffer_to_host(b, back, sizeof back) || back[2] != 3)
      j->failures++;
    xrt_buffer_release(b);
  }
  return NULL;
}

static void test_trace_threads(void **state) {
  (void)state;
  char path[512];
  xrt_client *c = traced_client(path, sizeof path, "thr", 2);
  enum { NT = 4, PER = 100 };
  pthread_t th[NT];
  xfer_job jobs[NT];
  for (int t = 0; t < NT; t++) {
    jobs[t] = (xfer_job){c, t % 2, PER, 0};
    assert_int_equal(pthread_create(&th[t], NULL, xfer_thread, &jobs[t]), 0);
  }
  for (int t = 0; t < NT; t++) {
    pthread_join(th[t], NULL);
    assert_int_equal(jobs[t].failures, 0);
  }
  assert_int_equal(xrt_trace_stop(), XRT_OK);
  xrt_client_release(c);
  jval doc;
  const jval *ev;
  load_trace(path, &doc, &ev);
  int pid = client_pid(ev, 2);
  for (int d = 0; d < 2; d++) {
    assert_int_equal(count_events(ev, "transfer", "h2d 3xf32", pid, d + 1),
                     NT / 2 * PER);
    assert_int_equal(count_events(ev, "transfer", "d2h 3xf32", pid, d + 1),
                     NT / 2 * PER);
  }
  jfree(&doc);
  unlink(path);
}

/* Start and stop: bad paths, and a new trace finishing the previous. */
static void test_trace_start_stop(void **state) {
  (void)state;
  assert_int_equal(xrt_trace_start(NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_trace_start(""), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_trace_start("/nonexistent-xrt-dir/t.json"),
                   XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(xrt_last_error(), "/nonexistent-xrt-dir/t.json");
  assert_false(xrt_trace_enabled());
  char p1[512], p2[512];
  temp_path(p1, sizeof p1, "one");
  temp_path(p2, sizeof p2, "two");
  xrt_client *c = tu_client(1, 0, (uint64_t)1 << 24);
  assert_int_equal(xrt_trace_start(p1), XRT_OK);
  int32_t v = 5;
  xrt_shape sh = TU_SCALAR(XRT_S32);
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, &v,
                                        &b), XRT_OK);
  assert_int_equal(xrt_trace_start(p2), XRT_OK); /* finishes p1 */
  int32_t back = 0;
  assert_int_equal(xrt_buffer_to_host(b, &back, sizeof back), XRT_OK);
  assert_int_equal(back, 5);
  xrt_buffer_release(b);
  assert_int_equal(xrt_trace_stop(), XRT_OK);
  xrt_client_release(c);
  jval d1, d2;
  const jval *e1, *e2;
  load_trace(p1, &d1, &e1);
  load_trace(p2, &d2, &e2);
  int pid1 = client_pid(e1, 1), pid2 = client_pid(e2, 1);
  assert_true(pid1 > 0);
  assert_int_equal(pid1, pid2); /* one client, named in both */
  assert_int_equal(count_events(e1, "transfer", "h2d i32", pid1, 1), 1);
  assert_int_equal(count_events(e1, "transfer", "d2h i32", -1, -1), 0);
  assert_int_equal(count_events(e2, "transfer", "d2h i32", pid2, 1), 1);
  assert_int_equal(count_events(e2, "transfer", "h2d i32", -1, -1), 0);
  jfree(&d1);
  jfree(&d2);
  unlink(p1);
  unlink(p2);
}

/* A trace that cannot be written stops itself with a log line; the calls
 * being traced still succeed, and xrt_trace_stop reports the loss. */
typedef struct err_log {
  pthread_mutex_t mu;
  int errors;
  char first[256];
} err_log;

static void on_error_log(void *user, xrt_log_level level,
                         const char *component, const char *message) {
  err_log *r = (err_log *)user;
  (void)component;
  pthread_mutex_lock(&r->mu);
  if (level == XRT_LOG_ERROR && r->errors++ == 0)
    snprintf(r->first, sizeof r->first, "%s", message);
  pthread_mutex_unlock(&r->mu);
}

static void test_trace_write_failure(void **state) {
  (void)state;
  static err_log r = {PTHREAD_MUTEX_INITIALIZER, 0, ""};
  xrt_log_set_callback(on_error_log, &r);
  xrt_client *c = tu_client(1, 0, (uint64_t)1 << 24);
  assert_int_equal(xrt_trace_start("/dev/full"), XRT_OK); /* writes fail */
  float v[3] = {1, 2, 3};
  xrt_shape sh = TU_SHAPE(XRT_F32, 3);
  for (int i = 0; i < 2000; i++) { /* events well beyond one buffer */
    xrt_buffer *b = NULL;
    float back[3] = {0, 0, 0};
    assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, v,
                                          &b), XRT_OK);
    assert_int_equal(xrt_buffer_to_host(b, back, sizeof back), XRT_OK);
    assert_true(back[0] == 1 && back[2] == 3);
    xrt_buffer_release(b);
  }
  assert_false(xrt_trace_enabled());
  assert_int_equal(r.errors, 1);
  TU_ASSERT_CONTAINS(r.first, "trace: writing /dev/full failed");
  TU_ASSERT_CONTAINS(r.first, "tracing stopped");
  assert_int_equal(xrt_trace_stop(), XRT_DATA_LOSS);
  TU_ASSERT_CONTAINS(xrt_last_error(), "/dev/full");
  assert_int_equal(xrt_trace_stop(), XRT_OK); /* it is closed now */
  xrt_log_set_callback(NULL, NULL);
  xrt_client_release(c);
}

/* ---- XRT_TRACE and XRT_LOG: checked in a fresh copy of this program ---- */

static const char *self_path = "/proc/self/exe";
/* Under valgrind /proc/self/exe is valgrind's own tool, which refuses to
 * run directly; readlink of it names this program (main resolves it). */
static char self_buf[4096];

/* Runs this program with mode and the environment variable name=value;
 * returns its exit status (stderr to err_path when given). */
static int run_child(const char *mode, const char *name, const char *value,
                     const char *err_path) {
  pid_t pid = fork();
  if (pid < 0) fail_msg("fork: %s", strerror(errno));
  if (pid == 0) {
    setenv(name, value, 1);
    if (err_path && !freopen(err_path, "w", stderr)) _exit(120);
    execl(self_path, self_path, mode, (char *)NULL);
    _exit(121);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Child: XRT_TRACE is set; one client, one transfer, no xrt_trace_stop:
 * the trace is finished at exit. */
static int child_trace(void) {
  xrt_client *c = NULL;
  if (xrt_client_create(NULL, &c)) return 2;
  if (!xrt_trace_enabled()) return 3;
  int32_t v = 9;
  xrt_shape sh = TU_SHAPE(XRT_S32, 1);
  xrt_buffer *b = NULL;
  if (xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, &v, &b)) return 4;
  xrt_buffer_release(b);
  xrt_client_release(c);
  return 0;
}

static void test_env_trace(void **state) {
  (void)state;
  char path[512];
  temp_path(path, sizeof path, "env");
  assert_int_equal(run_child("--child-trace", "XRT_TRACE", path, NULL), 0);
  jval doc;
  const jval *ev;
  load_trace(path, &doc, &ev);
  int pid = client_pid(ev, 1);
  assert_true(pid > 0);
  assert_int_equal(count_events(ev, "transfer", "h2d 1xi32", pid, 1), 1);
  jfree(&doc);
  unlink(path);
}

/* Child: XRT_LOG="debug,compile" (or "Debug , compile"). */
static int child_log_compile(void) {
  if (!xrt_log_enabled(XRT_LOG_DEBUG, "compile")) return 2;
  if (xrt_log_enabled(XRT_LOG_TRACE, "compile")) return 3;
  if (xrt_log_enabled(XRT_LOG_DEBUG, "exec")) return 4;
  if (xrt_log_enabled(XRT_LOG_INFO, "core")) return 5;
  if (!xrt_log_enabled(XRT_LOG_WARN, "exec")) return 6;
  return 0;
}

/* Child: XRT_LOG is bad; a warning names it and the default (warn)
 * stays. */
static int child_log_bad(void) {
  if (xrt_log_enabled(XRT_LOG_INFO, "core")) return 2;
  if (!xrt_log_enabled(XRT_LOG_WARN, "core")) return 3;
  return 0;
}

static void test_env_log(void **state) {
  (void)state;
  assert_int_equal(run_child("--child-log-compile", "XRT_LOG", "debug,compile",
                             NULL), 0);
  assert_int_equal(run_child("--child-log-compile", "XRT_LOG",
                             " Debug , compile ", NULL), 0);
  char err[512];
  temp_path(err, sizeof err, "stderr");
  assert_int_equal(run_child("--child-log-bad", "XRT_LOG", "loud,compile",
                             err), 0);
  size_t len;
  char *text = tu_read_file(err, &len);
  assert_non_null(strstr(text, "xrt warn core: XRT_LOG=loud,compile ignored: "
                               "unknown level 'loud'"));
  free(text);
  unlink(err);
}

/* ---- logging through a callback ---- */

typedef struct log_rec {
  pthread_mutex_t mu;
  int n;
  xrt_log_level level[64];
  char component[64][32];
  char message[64][256];
} log_rec;

static log_rec rec = {PTHREAD_MUTEX_INITIALIZER, 0, {0}, {{0}}, {{0}}};

static void on_log(void *user, xrt_log_level level, const char *component,
                   const char *message) {
  log_rec *r = (log_rec *)user;
  pthread_mutex_lock(&r->mu);
  if (r->n < 64) {
    r->level[r->n] = level;
    snprintf(r->component[r->n], sizeof r->component[0], "%s", component);
    snprintf(r->message[r->n], sizeof r->message[0], "%s", message);
    r->n++;
  }
  pthread_mutex_unlock(&r->mu);
}

/* Index of the first record from component whose message contains text,
 * or -1. */
static int find_log(const char *component, const char *text) {
  for (int i = 0; i < rec.n; i++)
    if (strcmp(rec.component[i], component) == 0 &&
        strstr(rec.message[i], text))
      return i;
  return -1;
}

static void test_log_levels(void **state) {
  (void)state;
  xrt_log_set_callback(on_log, &rec);
  rec.n = 0;
  /* debug for compile only; the rest stays at warn. */
  assert_int_equal(xrt_log_configure("debug,compile"), XRT_OK);
  assert_true(xrt_log_enabled(XRT_LOG_DEBUG, "compile"));
  assert_false(xrt_log_enabled(XRT_LOG_TRACE, "compile"));
  assert_false(xrt_log_enabled(XRT_LOG_DEBUG, "exec"));
  assert_false(xrt_log_enabled(XRT_LOG_INFO, "core"));
  assert_true(xrt_log_enabled(XRT_LOG_WARN, "core"));
  assert_true(xrt_log_enabled(XRT_LOG_ERROR, "myapp"));
  assert_false(xrt_log_enabled(XRT_LOG_OFF, "compile"));
  xrt_client *c = tu_client(1, 0, (uint64_t)1 << 24);
  xrt_executable *e = tu_compile(c, add4, 0, NULL);
  xrt_executable_release(e);
  int i = find_log("compile", "compiled main in ");
  assert_true(i >= 0);
  assert_int_equal(rec.level[i], XRT_LOG_DEBUG);
  assert_int_equal(find_log("core", "client"), -1); /* info: below warn */
  for (int k = 0; k < rec.n; k++)
    if (strcmp(rec.component[k], "compile") != 0)
      assert_true(rec.level[k] <= XRT_LOG_WARN);
  xrt_client_release(c);

  /* info everywhere: client creation is logged. */
  rec.n = 0;
  assert_int_equal(xrt_log_configure("info"), XRT_OK);
  c = tu_client(3, 0, (uint64_t)1 << 24);
  i = find_log("core", "plugin 'sim', 3 device(s)");
  assert_true(i >= 0);
  assert_int_equal(rec.level[i], XRT_LOG_INFO);
  assert_int_equal(find_log("compile", "compiled"), -1);
  e = tu_compile(c, add4, 0, NULL);
  assert_int_equal(find_log("compile", "compiled"), -1); /* debug < info */
  xrt_executable_release(e);
  xrt_client_release(c);

  /* A bad spec changes nothing. */
  assert_int_equal(xrt_log_configure("loud"), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "unknown level 'loud'");
  assert_int_equal(xrt_log_configure("debug,bad name"), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "bad component name 'bad name'");
  assert_int_equal(xrt_log_configure(NULL), XRT_INVALID_ARGUMENT);
  assert_true(xrt_log_enabled(XRT_LOG_INFO, "exec"));
  assert_false(xrt_log_enabled(XRT_LOG_DEBUG, "exec"));

  /* The embedding program's own component. */
  rec.n = 0;
  assert_int_equal(xrt_log_configure("trace,myapp"), XRT_OK);
  xrt_log(XRT_LOG_TRACE, "myapp", "x=%d y=%s", 5, "z");
  xrt_log(XRT_LOG_TRACE, "core", "hidden");
  xrt_log(XRT_LOG_INFO, "other", "hidden too");
  xrt_log(XRT_LOG_WARN, "other", "shown %d", 7);
  assert_int_equal(rec.n, 2);
  assert_string_equal(rec.component[0], "myapp");
  assert_string_equal(rec.message[0], "x=5 y=z");
  assert_int_equal(rec.level[0], XRT_LOG_TRACE);
  assert_string_equal(rec.component[1], "other");
  assert_string_equal(rec.message[1], "shown 7");

  /* Failures returned to the caller, at debug level under "core". */
  rec.n = 0;
  assert_int_equal(xrt_log_configure("debug,core"), XRT_OK);
  c = tu_client(1, 0, (uint64_t)1 << 24);
  xrt_executable *bad = NULL;
  const char *text = "func.func @main() {\n  func.return %x : tensor<f32>\n}\n";
  assert_int_equal(xrt_compile(c, text, strlen(text), NULL, &bad),
                   XRT_INVALID_ARGUMENT);
  i = find_log("core", "returning INVALID_ARGUMENT: ");
  assert_true(i >= 0);
  assert_non_null(strstr(rec.message[i], "use of undefined value %x"));
  xrt_client_release(c);

  /* off: nothing, not even errors. */
  rec.n = 0;
  assert_int_equal(xrt_log_configure("off"), XRT_OK);
  xrt_log(XRT_LOG_ERROR, "core", "hidden");
  assert_false(xrt_log_enabled(XRT_LOG_ERROR, "compile"));
  assert_int_equal(rec.n, 0);

  /* Without the callback, messages go to stderr again (not to on_log). */
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
  xrt_log_set_callback(NULL, NULL);
  xrt_log(XRT_LOG_TRACE, "core", "hidden");
  assert_int_equal(rec.n, 0);
}

int main(int argc, char **argv) {
  ssize_t self_len = readlink("/proc/self/exe", self_buf, sizeof self_buf - 1);
  if (self_len > 0) {
    self_buf[self_len] = 0;
    self_path = self_buf;
  }
  if (argc == 2 && strcmp(argv[1], "--child-trace") == 0) return child_trace();
  if (argc == 2 && strcmp(argv[1], "--child-log-compile") == 0)
    return child_log_compile();
  if (argc == 2 && strcmp(argv[1], "--child-log-bad") == 0)
    return child_log_bad();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_parser),
      cmocka_unit_test(test_trace_workload),
      cmocka_unit_test(test_trace_escaping),
      cmocka_unit_test(test_trace_threads),
      cmocka_unit_test(test_trace_start_stop),
      cmocka_unit_test(test_trace_write_failure),
      cmocka_unit_test(test_env_trace),
      cmocka_unit_test(test_env_log),
      cmocka_unit_test(test_log_levels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
