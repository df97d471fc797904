/*
 * test_trace_edges.c - the edges of logging and Chrome traces that
 * test_trace.c leaves out: every kind of UTF-8 sequence (valid ones of 2, 3
 * and 4 bytes, overlong forms, surrogates, code points past U+10FFFF,
 * truncated and broken sequences) and DEL in names written to a trace, the
 * 512-byte cap on an escaped name, unnamed modules, trace files that cannot
 * be created (each error mapped to its status), and the XRT_LOG spec
 * grammar (levels by digit, any case or "warning"; blanks, empty and
 * duplicate tokens; bad and too many component names), the NULL component,
 * messages longer than the 1 KiB buffer and a format that cannot be
 * encoded; XRT_LOG and XRT_TRACE values that are refused (set by main
 * before xrt reads them); the host services a plugin gets (log, trace
 * events, the trace clock).  Portable C only (no fork), so it runs on
 * Windows too.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <errno.h>
#include <time.h>
#include <wchar.h>

#include "test_plugin_abi.h"

/* ---- helpers ---- */

static int path_seq;

/* A fresh file name in the temporary directory. */
static void temp_name(char *path, size_t cap, const char *tag) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = getenv("TEMP");
  snprintf(path, cap, "%s/xrt_trace_edges_%s_%ld_%d.json",
           dir && *dir ? dir : "/tmp", tag, (long)time(NULL), path_seq++);
}

/* Compiles src on c (one function, returns its argument) and releases it. */
static void compile_ok(xrt_client *c, const char *src) {
  xrt_executable_release(tu_compile(c, src, 0, NULL));
}

/* A module named by the bytes of name (a quoted MLIR string: name must
 * hold no quote or backslash) with one identity function @main. */
static void compile_named(xrt_client *c, const char *name) {
  char src[2048];
  snprintf(src, sizeof src,
           "module @\"%s\" {\n"
           "func.func @main(%%a: tensor<f32>) -> tensor<f32> {\n"
           "  func.return %%a : tensor<f32>\n"
           "}\n}\n",
           name);
  compile_ok(c, src);
}

/* The whole trace file as a string (free it). */
static char *read_trace(const char *path) {
  size_t len;
  return tu_read_file(path, &len);
}

/* ---- names written to a trace ---- */

typedef struct utf8_case {
  const char *name; /* the module's name: raw bytes */
  const char *want; /* the compile event's name as escaped in the file */
} utf8_case;

/* Each byte sequence against its JSON form, worked out by hand from RFC
 * 3629's table of well-formed sequences: a sequence that is valid is copied,
 * and each byte that does not start one becomes \ufffd. */
static const utf8_case utf8_cases[] = {
    {"a\xc3\xa9z", "a\xc3\xa9z.main"},             /* U+00E9, 2 bytes */
    {"\xe2\x82\xac", "\xe2\x82\xac.main"},         /* U+20AC, 3 bytes */
    {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80.main"}, /* U+1F600, 4 bytes */
    {"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf.main"}, /* U+10FFFF, the last */
    {"\xed\x9f\xbf", "\xed\x9f\xbf.main"},         /* U+D7FF, below D800 */
    {"\xe0\xa0\x80", "\xe0\xa0\x80.main"},         /* U+0800, shortest E0 */
    {"\xf0\x90\x80\x80", "\xf0\x90\x80\x80.main"}, /* U+10000 */
    /* overlong: E0 80..9F, F0 80..8F; C0 and C1 never start one */
    {"\xe0\x80\x80", "\\ufffd\\ufffd\\ufffd.main"},
    {"\xf0\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd.main"},
    {"\xc1\xbf", "\\ufffd\\ufffd.main"},
    /* surrogates: ED A0..BF */
    {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd.main"},
    /* beyond U+10FFFF: F4 90.., and F5..FF */
    {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd.main"},
    {"\xf5\x80\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd.main"},
    /* a continuation byte alone, a broken and a truncated sequence */
    {"\x80x", "\\ufffdx.main"},
    {"\xe2\x28\xa1", "\\ufffd(\\ufffd.main"},
    {"x\xe2\x82", "x\\ufffd\\ufffd.main"},
    {"\xc3", "\\ufffd.main"},
    {"\xf0\x9f\x98", "\\ufffd\\ufffd\\ufffd.main"},
    /* DEL and a tab are control characters: \u escapes */
    {"d\x7f\x09", "d\\u007f\\u0009.main"},
};

static void test_trace_utf8_names(void **state) {
  (void)state;
  char path[512];
  temp_name(path, sizeof path, "utf8");
  xrt_client *c = tu_client(1, 0, (uint64_t)1 << 24);
  assert_int_equal(xrt_trace_start(path), XRT_OK);
  for (size_t i = 0; i < TU_COUNT(utf8_cases); i++)
    compile_named(c, utf8_cases[i].name);
  assert_int_equal(xrt_trace_stop(), XRT_OK);
  xrt_client_release(c);
  char *text = read_trace(path);
  for (size_t i = 0; i < TU_COUNT(utf8_cases); i++) {
    char want[256];
    snprintf(want, sizeof want, "\"name\":\"%s\"", utf8_cases[i].want);
    if (!strstr(text, want))
      fail_msg("case %zu: %s not in the trace", i, want);
  }
  free(text);
  remove(path);
}

/* An unnamed module's function is named alone; a name longer than 512
 * bytes is cut to its first 512 when escaped (module and entry are each
 * cut to 256 before, so a 256-byte module and a 300-byte entry make
 * 256 + 1 + 256 = 513 bytes, of which the last is dropped). */
static void test_trace_unnamed_and_long(void **state) {
  (void)state;
  char path[512];
  temp_name(path, sizeof path, "long");
  xrt_client *c = tu_client(1, 0, (uint64_t)1 << 24);
  assert_int_equal(xrt_trace_start(path), XRT_OK);
  compile_ok(c, "func.func @solo(%a: tensor<f32>) -> tensor<f32> {\n"
                "  func.return %a : tensor<f32>\n}\n");
  char mod[301], fn[301];
  memset(mod, 'm', 300);
  mod[300] = 0;
  memset(fn, 'f', 300);
  fn[300] = 0;
  static char src[4096];
  snprintf(src, sizeof src,
           "module @%s {\n"
           "func.func @%s(%%a: tensor<f32>) -> tensor<f32> {\n"
           "  func.return %%a : tensor<f32>\n"
           "}\n}\n",
           mod, fn);
  compile_ok(c, src);
  compile_ok(c, "func.func @\"y\xf0\x9f\x98\"(%a: tensor<f32>) -> tensor<f32> {\n"
                "  func.return %a : tensor<f32>\n}\n");
  compile_ok(c, "func.func @\"z\xc3\"(%a: tensor<f32>) -> tensor<f32> {\n"
                "  func.return %a : tensor<f32>\n}\n");
  assert_int_equal(xrt_trace_stop(), XRT_OK);
  xrt_client_release(c);
  char *text = read_trace(path);
  assert_non_null(strstr(text, "\"name\":\"solo\""));
  char want[600];
  int n = snprintf(want, sizeof want, "\"name\":\"");
  memset(want + n, 'm', 256);
  want[n + 256] = '.';
  memset(want + n + 257, 'f', 255); /* 512 bytes in all */
  memcpy(want + n + 512, "\"", 2);
  if (!strstr(text, want)) fail_msg("the cut name is not in the trace");
  /* a sequence cut by the end of the name (an unnamed module's only
   * function, so nothing follows it) */
  assert_non_null(strstr(text, "\"name\":\"y\\ufffd\\ufffd\\ufffd\""));
  assert_non_null(strstr(text, "\"name\":\"z\\ufffd\""));
  free(text);
  remove(path);
}

/* Trace files that cannot be created: each error is mapped to a status. */
static void test_trace_start_errors(void **state) {
  (void)state;
  char longp[600];
  memset(longp, 'p', 599);
  longp[599] = 0;
  assert_int_equal(xrt_trace_start(longp), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "path is too long");
  memset(longp, 'p', 511); /* 511 bytes fit the 512 */
  longp[511] = 0;
  assert_int_not_equal(xrt_trace_start(longp), XRT_INVALID_ARGUMENT);
  assert_false(xrt_trace_enabled());
  remove(longp);
#if !defined(_WIN32)
  /* a directory: EISDIR, neither permission nor a missing file */
  const char *dir = getenv("TMPDIR");
  assert_int_equal(xrt_trace_start(dir && *dir ? dir : "/tmp"),
                   XRT_UNAVAILABLE);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_trace_start: cannot create");
  /* a file used as a directory: ENOTDIR */
  char file[512], below[600];
  temp_name(file, sizeof file, "notdir");
  tu_write_file(file, "x", 1);
  snprintf(below, sizeof below, "%s/t.json", file);
  assert_int_equal(xrt_trace_start(below), XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(xrt_last_error(), below);
  remove(file);
#endif
  assert_false(xrt_trace_enabled());
}

/* ---- the log ---- */

typedef struct log_rec {
  int count;
  xrt_log_level level;
  char component[64];
  char message[2048];
} log_rec;

static void on_log(void *user, xrt_log_level level, const char *component,
                   const char *message) {
  log_rec *r = (log_rec *)user;
  r->count++;
  r->level = level;
  snprintf(r->component, sizeof r->component, "%s", component);
  snprintf(r->message, sizeof r->message, "%s", message);
}

/* The level part of a spec: digits, names in any case, "warning". */
static void test_log_levels_spelled(void **state) {
  (void)state;
  static const struct {
    const char *spec;
    xrt_log_level max; /* the highest level now enabled for "core" */
  } ok[] = {
      {"0", XRT_LOG_OFF},       {"1", XRT_LOG_ERROR}, {"2", XRT_LOG_WARN},
      {"3", XRT_LOG_INFO},      {"4", XRT_LOG_DEBUG}, {"5", XRT_LOG_TRACE},
      {"DEBUG", XRT_LOG_DEBUG}, {"Info", XRT_LOG_INFO},
      {"warning", XRT_LOG_WARN}, {" \ttrace \t", XRT_LOG_TRACE},
      {"ERROR", XRT_LOG_ERROR}, {"Off", XRT_LOG_OFF},
  };
  for (size_t i = 0; i < TU_COUNT(ok); i++) {
    if (xrt_log_configure(ok[i].spec) != XRT_OK)
      fail_msg("spec \"%s\": %s", ok[i].spec, xrt_last_error());
    for (int l = XRT_LOG_ERROR; l <= XRT_LOG_TRACE; l++)
      if (xrt_log_enabled((xrt_log_level)l, "core") != (l <= (int)ok[i].max))
        fail_msg("spec \"%s\": level %d", ok[i].spec, l);
    /* a component never named follows the default */
    assert_int_equal(xrt_log_enabled(XRT_LOG_ERROR, "never-named"),
                     ok[i].max >= XRT_LOG_ERROR);
  }
  /* Not levels: a digit past 5, prefixes and extensions of names, a
   * capitalised "Warning" (only the lower-case long form is known). */
  static const char *bad[] = {"6", "9", "deb", "debugx", "warnin", "Warning",
                              "tracey", "o"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    assert_int_equal(xrt_log_configure(bad[i]), XRT_INVALID_ARGUMENT);
    TU_ASSERT_CONTAINS(xrt_last_error(), "unknown level");
  }
  /* A very long level is quoted in the message cut to 64 bytes. */
  char lng[200];
  memset(lng, 'z', 199);
  lng[199] = 0;
  assert_int_equal(xrt_log_configure(lng), XRT_INVALID_ARGUMENT);
  char want[128];
  snprintf(want, sizeof want, "unknown level '%.64s'", lng);
  TU_ASSERT_CONTAINS(xrt_last_error(), want);
  char more[128];
  snprintf(more, sizeof more, "'%.65s'", lng);
  assert_null(strstr(xrt_last_error(), more));
  /* the level applies still: the last good spec was "Off" */
  assert_false(xrt_log_enabled(XRT_LOG_ERROR, "core"));
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
}

/* The component part: empty tokens, blanks, duplicates, an empty level
 * (warn), name characters, the 31-byte name limit, too many names. */
static void test_log_components(void **state) {
  (void)state;
  /* an empty level token keeps warn, for the listed components only */
  assert_int_equal(xrt_log_configure(",compile"), XRT_OK);
  assert_true(xrt_log_enabled(XRT_LOG_WARN, "compile"));
  assert_false(xrt_log_enabled(XRT_LOG_INFO, "compile"));
  /* blanks, empty tokens and a duplicate */
  assert_int_equal(xrt_log_configure("debug, \tparse\t ,,, parse ,"), XRT_OK);
  assert_true(xrt_log_enabled(XRT_LOG_DEBUG, "parse"));
  assert_false(xrt_log_enabled(XRT_LOG_INFO, "exec"));
  assert_true(xrt_log_enabled(XRT_LOG_WARN, "exec"));
  /* "off" for one component: below the default, which stays warn */
  assert_int_equal(xrt_log_configure("off,var"), XRT_OK);
  assert_false(xrt_log_enabled(XRT_LOG_ERROR, "var"));
  assert_true(xrt_log_enabled(XRT_LOG_WARN, "cache"));
  /* every character a name may hold */
  assert_int_equal(xrt_log_configure("info,Az09_-.x"), XRT_OK);
  assert_true(xrt_log_enabled(XRT_LOG_INFO, "Az09_-.x"));
  assert_false(xrt_log_enabled(XRT_LOG_INFO, "core"));
  /* characters it may not, and names of 32 bytes */
  static const char *bad[] = {"info,a!b", "info,a/b", "info,a b", "info,a:b",
                              "info,\x7f", "info,a@", "info,[x]", "info,{x}",
                              "info,a`", "info,a~",
                              "info,abcdefghijklmnopqrstuvwxyz012345"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    if (xrt_log_configure(bad[i]) != XRT_INVALID_ARGUMENT)
      fail_msg("spec \"%s\" was taken", bad[i]);
    TU_ASSERT_CONTAINS(xrt_last_error(), "bad component name");
  }
  /* 31 bytes are fine */
  assert_int_equal(xrt_log_configure("info,abcdefghijklmnopqrstuvwxyz01234"),
                   XRT_OK);
  /* a bad name longer than 64 bytes is quoted cut to 64 */
  char spec[200];
  int n = snprintf(spec, sizeof spec, "info,");
  memset(spec + n, 'q', 100);
  spec[n + 100] = 0;
  assert_int_equal(xrt_log_configure(spec), XRT_INVALID_ARGUMENT);
  char want[80];
  snprintf(want, sizeof want, "'%.64s'", spec + n);
  TU_ASSERT_CONTAINS(xrt_last_error(), want);
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
}

/* At most 16 components besides xrt's eight: fresh names past the room
 * left are refused (changing nothing), and so is a spec of more than the
 * 24 names there are slots for. */
static void test_log_too_many(void **state) {
  (void)state;
  /* Up to here this program named two components of its own. */
  static const char *xrt_names = "core,parse,compile,exec,buffer,plugin,var,"
                                 "cache";
  char spec[2048];
  /* 14 fresh names fill the 16 slots */
  int n = snprintf(spec, sizeof spec, "debug");
  for (int i = 0; i < 14; i++)
    n += snprintf(spec + n, sizeof spec - (size_t)n, ",fresh%d", i);
  assert_int_equal(xrt_log_configure(spec), XRT_OK);
  assert_true(xrt_log_enabled(XRT_LOG_DEBUG, "fresh13"));
  /* one more is refused */
  assert_int_equal(xrt_log_configure("info,fresh0,another"),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "too many components (at most 16 besides xrt's)");
  assert_true(xrt_log_enabled(XRT_LOG_DEBUG, "fresh13")); /* unchanged */
  /* all 24 known names are fine, a 25th (even a known one's duplicate is
   * skipped first) is not */
  n = snprintf(spec, sizeof spec, "info,%s,Az09_-.x,"
               "abcdefghijklmnopqrstuvwxyz01234", xrt_names);
  for (int i = 0; i < 14; i++)
    n += snprintf(spec + n, sizeof spec - (size_t)n, ",fresh%d", i);
  assert_int_equal(xrt_log_configure(spec), XRT_OK);
  assert_true(xrt_log_enabled(XRT_LOG_INFO, "fresh5"));
  assert_false(xrt_log_enabled(XRT_LOG_DEBUG, "fresh5"));
  snprintf(spec + n, sizeof spec - (size_t)n, ",core,fresh3,another");
  assert_int_equal(xrt_log_configure(spec), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "too many components");
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
}

/* Messages: the NULL component is "core", a NULL format says nothing,
 * long messages end in "...", a level out of range is never enabled. */
static void test_log_messages(void **state) {
  (void)state;
  static log_rec r;
  memset(&r, 0, sizeof r);
  xrt_log_set_callback(on_log, &r);
  assert_int_equal(xrt_log_configure("debug"), XRT_OK);
  assert_true(xrt_log_enabled(XRT_LOG_DEBUG, NULL));
  xrt_log(XRT_LOG_WARN, NULL, "v=%d", 42);
  assert_int_equal(r.count, 1);
  assert_int_equal(r.level, XRT_LOG_WARN);
  assert_string_equal(r.component, "core");
  assert_string_equal(r.message, "v=42");
  xrt_log(XRT_LOG_WARN, "core", NULL);
  assert_int_equal(r.count, 1);
  xrt_log(XRT_LOG_TRACE, "core", "too detailed");
  assert_int_equal(r.count, 1);
  assert_false(xrt_log_enabled(XRT_LOG_OFF, "core"));
  assert_false(xrt_log_enabled((xrt_log_level)6, "core"));
  assert_false(xrt_log_enabled((xrt_log_level)-1, "core"));
  /* 1500 bytes: the first 1020 kept, then "..." (1023 in all) */
  char big[1501];
  for (int i = 0; i < 1500; i++) big[i] = (char)('a' + i % 26);
  big[1500] = 0;
  xrt_log(XRT_LOG_ERROR, "exec", "%s", big);
  assert_int_equal(r.count, 2);
  assert_string_equal(r.component, "exec");
  assert_int_equal(strlen(r.message), 1023);
  assert_memory_equal(r.message, big, 1020);
  assert_string_equal(r.message + 1020, "...");
  /* exactly 1023 bytes fit */
  big[1023] = 0;
  xrt_log(XRT_LOG_ERROR, "exec", "%s", big);
  assert_string_equal(r.message, big);
#if !defined(_WIN32)
  /* a wide string with no encoding in the C locale: glibc's vsnprintf
   * fails (EILSEQ), and the message says so */
  const wchar_t bad[] = {(wchar_t)0xD800, 0};
  xrt_log(XRT_LOG_ERROR, "exec", "%ls", bad);
  assert_int_equal(r.count, 4);
  assert_string_equal(r.message, "(bad log format)");
#endif
  xrt_log_set_callback(NULL, NULL);
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
}

/* The plugin's host services log through xrt's log: a client's failures
 * are logged at debug level for "core" (xrt__log_failure). */
static void test_log_failures_at_debug(void **state) {
  (void)state;
  static log_rec r;
  memset(&r, 0, sizeof r);
  xrt_log_set_callback(on_log, &r);
  assert_int_equal(xrt_log_configure("debug,core"), XRT_OK);
  assert_int_equal(xrt_trace_start(""), XRT_INVALID_ARGUMENT);
  assert_true(r.count >= 1);
  assert_int_equal(r.level, XRT_LOG_DEBUG);
  TU_ASSERT_CONTAINS(r.message, "returning");
  TU_ASSERT_CONTAINS(r.message, "path is NULL or empty");
  xrt_log_set_callback(NULL, NULL);
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
}


/* ---- the host services a plugin gets ---- */

/* A plugin logs through xrt's log (at the levels XRT_LOG allows) and
 * records trace events on the client's tracks (a NULL category is
 * "plugin", a NULL name empty). */
static void test_plugin_host_services(void **state) {
  (void)state;
  xrt_context *x = tu_spy_context();
  xrt_client *c = tu_client_of(x, "spy", 1);
  const xrt_plugin_host_api *h = *tu_spy_host();
  assert_non_null(h);
  static log_rec r;
  memset(&r, 0, sizeof r);
  xrt_log_set_callback(on_log, &r);
  assert_int_equal(xrt_log_configure("info"), XRT_OK);
  h->log(h->ctx, XRT_LOG_INFO, "spy", "hello from the plugin");
  assert_int_equal(r.count, 1);
  assert_string_equal(r.component, "spy");
  assert_string_equal(r.message, "hello from the plugin");
  h->log(h->ctx, XRT_LOG_DEBUG, "spy", "too detailed");
  h->log(h->ctx, XRT_LOG_ERROR, "spy", NULL);
  assert_int_equal(r.count, 1);
  xrt_log_set_callback(NULL, NULL);
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
  int64_t t0 = h->now_ns(h->ctx);
  assert_true(t0 > 0);
  assert_false(h->trace_enabled(h->ctx));
  char path[512];
  temp_name(path, sizeof path, "host");
  assert_int_equal(xrt_trace_start(path), XRT_OK);
  assert_true(h->trace_enabled(h->ctx));
  int64_t t1 = h->now_ns(h->ctx);
  assert_true(t1 >= t0);
  h->trace_event(h->ctx, 0, NULL, NULL, t0, t1);
  h->trace_event(h->ctx, -1, "kernel", "spy-kernel", t0, t1);
  assert_int_equal(xrt_trace_stop(), XRT_OK);
  assert_false(h->trace_enabled(h->ctx));
  char *text = read_trace(path);
  assert_non_null(strstr(text, "\"cat\":\"plugin\""));
  assert_non_null(strstr(text, "\"name\":\"spy-kernel\""));
  assert_non_null(strstr(text, "\"cat\":\"kernel\""));
  assert_non_null(strstr(text, "(spy)")); /* the process is named */
  free(text);
  remove(path);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* The group setup: the environment of test_env_refused. */
static int setup(void **state) {
  (void)state;
  setenv("XRT_LOG", "loudest", 1);
  setenv("XRT_TRACE", "/nonexistent-xrt-h6/t.json", 1);
  return 0;
}

/* XRT_TRACE and XRT_LOG are read once, at the first client and the first
 * log call: the group setup sets them to values xrt refuses, and this
 * test (the first) sees both refused (the log spec on stderr, the trace's
 * failure as a warning) and neither in force. */
static void test_env_refused(void **state) {
  (void)state;
  static log_rec r;
  memset(&r, 0, sizeof r);
  xrt_log_set_callback(on_log, &r);
  xrt_client *c = tu_client(1, 0, (uint64_t)1 << 20);
  assert_false(xrt_trace_enabled());
  assert_int_equal(r.count, 1);
  assert_int_equal(r.level, XRT_LOG_WARN);
  TU_ASSERT_CONTAINS(r.message, "XRT_TRACE ignored: xrt_trace_start: "
                                "cannot create /nonexistent-xrt-h6/t.json");
  /* warn, the default, is in force: XRT_LOG's bad value changed nothing */
  assert_true(xrt_log_enabled(XRT_LOG_WARN, "core"));
  assert_false(xrt_log_enabled(XRT_LOG_INFO, "core"));
  xrt_log_set_callback(NULL, NULL);
  /* without a callback, messages go to stderr (not checked here) */
  xrt_log(XRT_LOG_WARN, "core", "test_trace_edges: a warning on stderr");
  /* the empty spec is warn; NULL is refused */
  assert_int_equal(xrt_log_configure(""), XRT_OK);
  assert_true(xrt_log_enabled(XRT_LOG_WARN, "exec"));
  assert_false(xrt_log_enabled(XRT_LOG_INFO, "exec"));
  assert_int_equal(xrt_log_configure(NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "spec is NULL");
  assert_int_equal(xrt_log_configure("/"), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "unknown level '/'");
  xrt_client_release(c);
}

TU_MAIN(setup, NULL, cmocka_unit_test(test_env_refused),
        cmocka_unit_test(test_trace_utf8_names),
        cmocka_unit_test(test_trace_unnamed_and_long),
        cmocka_unit_test(test_trace_start_errors),
        cmocka_unit_test(test_log_levels_spelled),
        cmocka_unit_test(test_log_components),
        cmocka_unit_test(test_log_too_many),
        cmocka_unit_test(test_log_messages),
        cmocka_unit_test(test_log_failures_at_debug),
        cmocka_unit_test(test_plugin_host_services))
