/*
 * test_bytecode.c - portable artifacts (MLIR bytecode of VHLO): every
 * versioned artifact of StableHLO's compatibility suite reads into the same
 * IR as its text twin, function by function; a future artifact is refused
 * by version; hostile bytecode (truncations, corruptions, bad varints and
 * indices, cycles) gives a located error, never a crash; an artifact
 * compiles and runs.
 *
 * The artifacts come from XRT_TEST_VHLO_DIR (../shared/stablehlo/vhlo);
 * without it the tests that need them say so and pass.
 */
#include "test_util.h"
#include "ir_compare.h"

#include <dirent.h>

#ifndef XRT_TEST_VHLO_DIR
#define XRT_TEST_VHLO_DIR "../shared/stablehlo/vhlo"
#endif

/* The reader's text for a whole artifact (src/core/bytecode.c; hidden in
 * libxrt.a, which this test links): the comparison parses it function by
 * function, since every artifact holds some ops xrt refuses, and so does
 * its twin. */
xrt_status xrt__bytecode_to_text(const char *data, size_t len, const char *file,
                                 char **text, size_t *text_len);

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += k;
    if (n == cap) {
      char *b = realloc(buf, 2 * cap + 1);
      if (!b) { free(buf); buf = NULL; break; }
      buf = b;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[n] = 0;
  *len = n;
  return buf;
}

static bool have_dir(void) {
  DIR *d = opendir(XRT_TEST_VHLO_DIR);
  if (!d) {
    printf("[  SKIPPED ] %s not found: no artifacts to read\n", XRT_TEST_VHLO_DIR);
    return false;
  }
  closedir(d);
  return true;
}

/* The message of the last error without its "file:line:col: " prefix. */
static void error_text(char *out, size_t cap) {
  const char *m = xrt_last_error(), *p = m;
  for (int colons = 0; *p && colons < 3; p++) colons += *p == ':';
  snprintf(out, cap, "%s", *p == ' ' ? p + 1 : m);
}

typedef struct tally {
  int equal, refused_both, differ;
} tally;

/* Parses one function of each side and compares them. */
static void compare_one(const char *version, const chunk *tw, int ntw,
                        const chunk *t, const chunk *gen, int ngen,
                        const chunk *g, tally *out) {
  char *ts = with_callees(tw, ntw, t), *gs = with_callees(gen, ngen, g);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  xrt_program *pt = NULL, *pg = NULL;
  char et[512] = "", eg[512] = "";
  o.filename = "twin";
  if (xrt_program_parse(ts, strlen(ts), &o, &pt)) error_text(et, sizeof et);
  o.filename = "artifact";
  if (xrt_program_parse(gs, strlen(gs), &o, &pg)) error_text(eg, sizeof eg);
  diff d = {""};
  if (pt && pg) {
    const xrt_ir_func *a = find_func(xrt_program_module(pt), t->name);
    const xrt_ir_func *b = find_func(xrt_program_module(pg), t->name);
    if (a && b && func_eq(&d, a, b)) out->equal++;
    else out->differ++, printf("  %s @%s: %s\n", version, t->name, d.what);
  } else if (!pt && !pg && !strcmp(et, eg)) {
    out->refused_both++;
    if (getenv("XRT_TEST_VERBOSE")) /* what xrt refuses in both forms */
      printf("  %s @%s: refused by both: %s\n", version, t->name, et);
  } else {
    out->differ++;
    printf("  %s @%s: twin: %s | artifact: %s\n", version, t->name,
           pt ? "ok" : et, pg ? "ok" : eg);
  }
  xrt_program_release(pt);
  xrt_program_release(pg);
  free(ts);
  free(gs);
}

/* One versioned artifact against its twin; returns the functions that
 * differ. */
static int compare_artifact(const char *version, tally *sum) {
  char path[4096];
  size_t tn, bn, gn;
  snprintf(path, sizeof path - 4, "%s/stablehlo_legalize_to_vhlo.%.16s.mlir",
           XRT_TEST_VHLO_DIR, version);
  char *twin = read_all(path, &tn);
  strncat(path, ".bc", sizeof path - strlen(path) - 1);
  char *bc = read_all(path, &bn), *gen = NULL;
  assert_non_null(twin);
  assert_non_null(bc);
  xrt_status s = xrt__bytecode_to_text(bc, bn, path, &gen, &gn);
  if (s) printf("  %s: %s\n", version, xrt_last_error());
  assert_int_equal(s, XRT_OK);
  enum { CAP = 4096 };
  chunk *tw = calloc(CAP, sizeof *tw), *gc = calloc(CAP, sizeof *gc);
  int ntw = split_twin(twin, tw, CAP), ngc = split_generated(gen, gc, CAP);
  tally t = {0, 0, 0};
  for (int i = 0; i < ntw; i++) {
    const chunk *g = NULL;
    for (int k = 0; k < ngc && !g; k++)
      if (!strcmp(gc[k].name, tw[i].name)) g = &gc[k];
    if (!g) {
      printf("  %s @%s: not in the artifact\n", version, tw[i].name);
      t.differ++;
      continue;
    }
    compare_one(version, tw, ntw, &tw[i], gc, ngc, g, &t);
  }
  printf("  %-7s %3d functions (%3d in the artifact): %3d equal, %3d refused "
         "by both, %d differ\n", version, ntw, ngc, t.equal, t.refused_both,
         t.differ);
  sum->equal += t.equal;
  sum->refused_both += t.refused_both;
  sum->differ += t.differ;
  free(tw);
  free(gc);
  free(twin);
  free(bc);
  free(gen);
  return t.differ;
}

static void test_versioned_artifacts_match_twins(void **state) {
  (void)state;
  if (!have_dir()) return;
  DIR *d = opendir(XRT_TEST_VHLO_DIR);
  assert_non_null(d);
  static const char pre[] = "stablehlo_legalize_to_vhlo.";
  char versions[64][32];
  int nv = 0;
  for (struct dirent *e; (e = readdir(d)) && nv < 64;) {
    size_t n = strlen(e->d_name);
    if (strncmp(e->d_name, pre, sizeof pre - 1) || n < sizeof pre + 8 ||
        strcmp(e->d_name + n - 8, ".mlir.bc"))
      continue;
    snprintf(versions[nv++], sizeof versions[0], "%.*s",
             (int)(n - 8 - (sizeof pre - 1)), e->d_name + sizeof pre - 1);
  }
  closedir(d);
  tally sum = {0, 0, 0};
  int bad = 0;
  for (int i = 0; i < nv; i++) bad += compare_artifact(versions[i], &sum) != 0;
  printf("  %d artifacts, %d with differences; functions: %d equal, %d refused "
         "by both, %d differ\n", nv, bad, sum.equal, sum.refused_both, sum.differ);
  assert_true(nv >= 32);
  assert_int_equal(sum.differ, 0);
}

/* ---------------------------------------------------------------------
 * Whole artifacts: refused by version, compiled and run
 * ------------------------------------------------------------------- */

static char *read_artifact(const char *name, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", XRT_TEST_VHLO_DIR, name);
  char *b = read_all(path, len);
  assert_non_null(b);
  return b;
}

static void test_future_artifact_refused(void **state) {
  (void)state;
  if (!have_dir()) return;
  size_t n;
  char *b = read_artifact("invalid_vhlo_future.mlir.bc", &n);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "future.mlir.bc";
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(b, n, &o, &p), XRT_UNIMPLEMENTED);
  assert_null(p);
  TU_ASSERT_PREFIX(xrt_last_error(), "future.mlir.bc: bytecode offset ");
  TU_ASSERT_CONTAINS(xrt_last_error(), "StableHLO 2.0.0");
  TU_ASSERT_CONTAINS(xrt_last_error(), xrt_stablehlo_version() ? "newer" : "");
  free(b);
}

/* vhlo_emit_version_api.1_1_0.mlir.bc is @main(x) = x + x, at 1.1.0: it
 * compiles from its bytes (xrt_compile) and runs; its IR is its twin's. */
static void test_artifact_runs(void **state) {
  (void)state;
  if (!have_dir()) return;
  size_t n, tn;
  char *b = read_artifact("vhlo_emit_version_api.1_1_0.mlir.bc", &n);
  char *twin = read_artifact("vhlo_emit_version_api.1_1_0.mlir", &tn);
  xrt_program *pb = NULL, *pt = NULL;
  assert_int_equal(xrt_program_parse(b, n, NULL, &pb), XRT_OK);
  assert_int_equal(xrt_program_parse(twin, tn, NULL, &pt), XRT_OK);
  diff d = {""};
  const xrt_ir_module *mb = xrt_program_module(pb), *mt = xrt_program_module(pt);
  assert_int_equal(mb->num_funcs, 1);
  if (!func_eq(&d, &mt->funcs[0], &mb->funcs[0])) fail_msg("%s", d.what);
  /* the op's location is the artifact's own, the source it came from */
  const xrt_ir_loc *l = &mb->funcs[0].body.ops[0].loc;
  TU_ASSERT_CONTAINS(l->file, "vhlo_emit_version_api.mlir");
  assert_int_equal(l->line, 12);
  assert_int_equal(l->col, 8);
  xrt_program_release(pb);
  xrt_program_release(pt);

  xrt_client *c = NULL;
  xrt_executable *exe = NULL;
  xrt_buffer *arg = NULL, *out = NULL;
  assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_shape sh = TU_SCALAR(XRT_F32);
  float x = 3.25f, y = 0;
  assert_int_equal(xrt_compile(c, b, n, NULL, &exe), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, dev, &sh, &x, &arg), XRT_OK);
  assert_int_equal(xrt_execute(exe, dev, &arg, 1, &out, 1, NULL), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(out, &y, sizeof y), XRT_OK);
  assert_true(y == 6.5f);
  xrt_client_release(c);
  free(b);
  free(twin);
}

/* ---------------------------------------------------------------------
 * Hostile input
 * ------------------------------------------------------------------- */

/* Parses data; any failure must say where in the artifact (a text parse
 * error of the generated text is relocated to the op's offset). */
static xrt_status parse_hostile(const char *data, size_t n) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "h.bc";
  xrt_program *p = NULL;
  xrt_status s = xrt_program_parse(data, n, &o, &p);
  if (s == XRT_OK) {
    assert_non_null(p);
    xrt_program_release(p);
  } else if (n >= 4 && !memcmp(data, "ML\xefR", 4)) {
    const char *m = xrt_last_error(), *c = strchr(m, ':');
    int line = 0, col = 0;
    bool at_source = c && sscanf(c, ":%d:%d:", &line, &col) == 2;
    if (!strstr(m, "bytecode offset") && !at_source)
      fail_msg("unlocated error: %s", m);
  }
  return s;
}

static void test_truncated_and_corrupted(void **state) {
  (void)state;
  if (!have_dir()) return;
  size_t n;
  char *b = read_artifact("vhlo_emit_version_api.1_1_0.mlir.bc", &n);
  char *c = malloc(n);
  for (size_t k = 0; k < n; k++) { /* every prefix */
    memcpy(c, b, k);
    xrt_status s = parse_hostile(c, k);
    if (s == XRT_OK) fail_msg("a %zu-byte prefix of %zu parsed", k, n);
    if (k >= 4) TU_ASSERT_CONTAINS(xrt_last_error(), "bytecode offset");
  }
  static const unsigned char flips[] = {0x01, 0x02, 0x80, 0xff, 0x40, 0x10};
  for (size_t k = 4; k < n; k++) /* single-byte corruptions */
    for (size_t f = 0; f < sizeof flips; f++) {
      memcpy(c, b, n);
      c[k] = (char)(c[k] ^ flips[f]);
      parse_hostile(c, n);
      c[k] = 0;
      parse_hostile(c, n);
    }
  free(c);
  free(b);
}

/* A small builder of artifacts for the cases corruption rarely hits. */
typedef struct bbuf {
  unsigned char d[4096];
  size_t n;
} bbuf;

static void bb_bytes(bbuf *b, const void *p, size_t n) {
  assert_true(b->n + n <= sizeof b->d);
  memcpy(b->d + b->n, p, n);
  b->n += n;
}

static void bb_byte(bbuf *b, unsigned v) {
  unsigned char c = (unsigned char)v;
  bb_bytes(b, &c, 1);
}

/* PrefixVarInt of v (up to 2^56). */
static void bb_varint(bbuf *b, uint64_t v) {
  int extra = 0;
  while (extra < 8 && v >> (7 * (extra + 1))) extra++;
  uint64_t x = ((v << 1) | 1) << extra;
  for (int i = 0; i <= extra; i++) bb_byte(b, (unsigned)(x >> (8 * i)) & 0xff);
}

static void bb_section(bbuf *b, int id, const bbuf *body) {
  bb_byte(b, (unsigned)id);
  bb_varint(b, body->n);
  bb_bytes(b, body->d, body->n);
}

/* An artifact of two dialects (builtin, vhlo), one op name
 * (builtin.module), attribute 0 encoded as attr0 (vhlo, custom), an IR
 * section ir; strings: "builtin", "vhlo", "module". */
static void bb_artifact(bbuf *out, const bbuf *attr0, const bbuf *ir) {
  bbuf s = {{0}, 0}, d = {{0}, 0}, at = {{0}, 0}, off = {{0}, 0};
  static const char *const strs[] = {"builtin", "vhlo", "module"};
  bb_varint(&s, 3);
  for (int i = 2; i >= 0; i--) bb_varint(&s, strlen(strs[i]) + 1);
  for (int i = 0; i < 3; i++) bb_bytes(&s, strs[i], strlen(strs[i]) + 1);
  bb_varint(&d, 2);
  bb_varint(&d, 0 << 1); /* builtin, no version */
  bb_varint(&d, 1 << 1); /* vhlo */
  bb_varint(&d, 1);      /* op names: 1 */
  bb_varint(&d, 0);      /* group: builtin, 1 name */
  bb_varint(&d, 1);
  bb_varint(&d, (2 << 1) | 1);
  bb_bytes(&at, attr0->d, attr0->n);
  bb_varint(&off, 1); /* one attribute, no types */
  bb_varint(&off, 0);
  bb_varint(&off, 1); /* group: vhlo, 1 entry */
  bb_varint(&off, 1);
  bb_varint(&off, (attr0->n << 1) | 1);
  out->n = 0;
  bb_bytes(out, "ML\xefR", 4);
  bb_varint(out, 6);
  bb_bytes(out, "StableHLO_v1.0.0", 17);
  bb_section(out, 0, &s);
  bb_section(out, 1, &d);
  bb_section(out, 2, &at);
  bb_section(out, 3, &off);
  bb_section(out, 4, ir);
}

static void expect_located(const bbuf *b, const char *what) {
  assert_int_not_equal(parse_hostile((const char *)b->d, b->n), XRT_OK);
  TU_ASSERT_PREFIX(xrt_last_error(), "h.bc: bytecode offset ");
  TU_ASSERT_CONTAINS(xrt_last_error(), what);
}

static void test_crafted_artifacts(void **state) {
  (void)state;
  bbuf a = {{0}, 0}, ir = {{0}, 0}, art;
  /* attribute 0: an array holding itself; the module's location is it */
  bb_varint(&a, 1);
  bb_varint(&a, 1);
  bb_varint(&a, 0);
  bb_varint(&ir, 1 << 1); /* one op, no arguments */
  bb_varint(&ir, 0);      /* builtin.module */
  bb_byte(&ir, 0);        /* mask: nothing */
  bb_varint(&ir, 0);      /* location: attribute 0 */
  bb_artifact(&art, &a, &ir);
  expect_located(&art, "refers to itself");

  /* an attribute index out of range */
  ir.n = 0;
  bb_varint(&ir, 1 << 1);
  bb_varint(&ir, 0);
  bb_byte(&ir, 0);
  bb_varint(&ir, 7);
  bb_artifact(&art, &a, &ir);
  expect_located(&art, "attribute index 7 out of range");

  /* an op name index out of range */
  ir.n = 0;
  bb_varint(&ir, 1 << 1);
  bb_varint(&ir, 3);
  bb_artifact(&art, &a, &ir);
  expect_located(&art, "op name index 3 out of range");

  /* an unknown VHLO attribute code */
  a.n = 0;
  bb_varint(&a, 99);
  ir.n = 0;
  bb_varint(&ir, 1 << 1);
  bb_varint(&ir, 0);
  bb_byte(&ir, 0);
  bb_varint(&ir, 0);
  bb_artifact(&art, &a, &ir);
  expect_located(&art, "unknown VHLO attribute code 99");

  /* more ops than the data holds */
  ir.n = 0;
  bb_varint(&ir, (uint64_t)1 << 40);
  bb_artifact(&art, &a, &ir);
  expect_located(&art, "more ops than the data holds");

  /* a section longer than the file */
  bb_artifact(&art, &a, &ir);
  art.d[art.n - ir.n - 1] = 0x7f; /* the IR section's length: 63 */
  expect_located(&art, "bytes needed");

  /* a varint cut short: 9-byte form with 3 bytes left */
  art.n = 0;
  bb_bytes(&art, "ML\xefR\x00\x01\x02", 7);
  expect_located(&art, "truncated varint");

  /* a format newer than 6 */
  art.n = 0;
  bb_bytes(&art, "ML\xefR", 4);
  bb_varint(&art, 7);
  expect_located(&art, "bytecode format 7");

  /* a producer that is not StableHLO */
  art.n = 0;
  bb_bytes(&art, "ML\xefR", 4);
  bb_varint(&art, 6);
  bb_bytes(&art, "MLIR19\0", 7);
  expect_located(&art, "not a StableHLO portable artifact");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_versioned_artifacts_match_twins),
      cmocka_unit_test(test_future_artifact_refused),
      cmocka_unit_test(test_artifact_runs),
      cmocka_unit_test(test_truncated_and_corrupted),
      cmocka_unit_test(test_crafted_artifacts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
