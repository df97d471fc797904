/*
 * test_bytecode_write.c - xrt_program_serialize: every program the text
 * parser accepts in a sample (examples/, chunks of StableHLO's interpreter
 * tests, the functions of the versioned VHLO twins) reads back from the
 * artifact xrt writes into the same IR (parse(serialize(P)) == P); the
 * twins also at their own versions, older bytecode formats included, in
 * the format the official artifacts of that version carry; ops and
 * attributes a target lacks are refused by name; a written artifact
 * compiles and runs.
 */
#include "test_util.h"
#include "ir_compare.h"

#include <dirent.h>

#ifndef XRT_TEST_VHLO_DIR
#define XRT_TEST_VHLO_DIR "../shared/stablehlo/vhlo"
#endif
#ifndef XRT_TEST_INTERPRET_DIR
#define XRT_TEST_INTERPRET_DIR "../shared/stablehlo/interpret"
#endif

typedef struct rt_tally {
  int equal, refused, unparsed, differ;
} rt_tally;

/* Module-level facts the IR keeps beside its functions. */
static bool module_eq(diff *d, const xrt_ir_module *a, const xrt_ir_module *b) {
  if (strcmp(a->name ? a->name : "", b->name ? b->name : "") ||
      a->num_replicas != b->num_replicas || a->num_partitions != b->num_partitions ||
      a->num_funcs != b->num_funcs)
    return differ(d, "module name, replicas, partitions or function count differ");
  for (int32_t i = 0; i < a->num_funcs; i++)
    if (!func_eq(d, &a->funcs[i], &b->funcs[i])) return false;
  return true;
}

/* Parses text; if it parses, serializes it at target, parses the bytes
 * and compares. */
static void round_trip(const char *what, const char *text, size_t n,
                       const char *target, rt_tally *t) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = what;
  xrt_program *p = NULL, *q = NULL;
  if (xrt_program_parse(text, n, &o, &p)) {
    t->unparsed++;
    return;
  }
  char *bytes = NULL;
  size_t len = 0;
  xrt_status s = xrt_program_serialize(p, target, &bytes, &len);
  if (s) {
    t->refused++;
    if (getenv("XRT_TEST_VERBOSE")) printf("  %s: refused: %s\n", what, xrt_last_error());
    assert_int_equal(s, XRT_UNIMPLEMENTED);
    xrt_program_release(p);
    return;
  }
  o.filename = "written.mlir.bc";
  diff d = {""};
  if (xrt_program_parse(bytes, len, &o, &q)) {
    t->differ++;
    printf("  %s: the written artifact does not read: %s\n", what, xrt_last_error());
  } else if (!module_eq(&d, xrt_program_module(p), xrt_program_module(q))) {
    t->differ++;
    printf("  %s: %s\n", what, d.what);
  } else {
    t->equal++;
  }
  free(bytes);
  xrt_program_release(p);
  xrt_program_release(q);
}

static void report(const char *what, const rt_tally *t) {
  printf("  %-28s %4d equal, %3d refused by the writer, %4d not parsed, %d differ\n",
         what, t->equal, t->refused, t->unparsed, t->differ);
}

static void test_examples(void **state) {
  (void)state;
  rt_tally t = {0, 0, 0, 0};
  static const char *const files[] = {"examples/mlp.mlir"};
  for (size_t i = 0; i < TU_COUNT(files); i++) {
    size_t n;
    char *s = tu_read_file(files[i], &n);
    if (!s) continue;
    round_trip(files[i], s, n, NULL, &t);
    free(s);
  }
  report("examples", &t);
  assert_int_equal(t.differ, 0);
}

/* Every chunk (split at "// -----") of every interpreter test file. */
static void test_interpreter_chunks(void **state) {
  (void)state;
  DIR *dir = opendir(XRT_TEST_INTERPRET_DIR);
  if (!dir) {
    printf("[  SKIPPED ] %s not found\n", XRT_TEST_INTERPRET_DIR);
    return;
  }
  rt_tally t = {0, 0, 0, 0};
  for (struct dirent *e; (e = readdir(dir));) {
    size_t nl = strlen(e->d_name);
    if (nl < 6 || strcmp(e->d_name + nl - 5, ".mlir")) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", XRT_TEST_INTERPRET_DIR, e->d_name);
    size_t n;
    char *s = tu_read_file(path, &n);
    if (!s) continue;
    int k = 0;
    for (char *c = s, *next; c; c = next, k++) {
      next = strstr(c, "// -----");
      size_t len = next ? (size_t)(next - c) : strlen(c);
      if (next) next += 8;
      char what[300];
      snprintf(what, sizeof what, "%.200s#%d", e->d_name, k);
      round_trip(what, c, len, NULL, &t);
    }
    free(s);
  }
  closedir(dir);
  report("interpreter chunks", &t);
  assert_true(t.equal > 300);
  assert_int_equal(t.differ, 0);
}

/* The functions of a versioned twin, at the newest version and at the
 * twin's own. */
static void twin_functions(const char *file, const char *target, rt_tally *t) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", XRT_TEST_VHLO_DIR, file);
  size_t n;
  char *twin = tu_read_file(path, &n);
  assert_non_null(twin);
  enum { CAP = 4096 };
  chunk *tw = calloc(CAP, sizeof *tw);
  int ntw = split_twin(twin, tw, CAP);
  for (int i = 0; i < ntw; i++) {
    char *s = with_callees(tw, ntw, &tw[i]), what[300];
    snprintf(what, sizeof what, "%.100s @%.100s", file, tw[i].name);
    round_trip(what, s, strlen(s), target, t);
    free(s);
  }
  free(tw);
  free(twin);
}

static void test_versioned_twins(void **state) {
  (void)state;
  DIR *dir = opendir(XRT_TEST_VHLO_DIR);
  if (!dir) {
    printf("[  SKIPPED ] %s not found\n", XRT_TEST_VHLO_DIR);
    return;
  }
  static const char pre[] = "stablehlo_legalize_to_vhlo.";
  rt_tally cur = {0, 0, 0, 0}, own = {0, 0, 0, 0};
  int files = 0;
  for (struct dirent *e; (e = readdir(dir));) {
    size_t nl = strlen(e->d_name);
    if (strncmp(e->d_name, pre, sizeof pre - 1) || nl < sizeof pre + 3 ||
        strcmp(e->d_name + nl - 5, ".mlir"))
      continue;
    char ver[32] = ""; /* "" for the unversioned file */
    if (nl > sizeof pre + 3)
      snprintf(ver, sizeof ver, "%.*s", (int)(nl - 5 - (sizeof pre - 1)),
               e->d_name + sizeof pre - 1);
    for (char *c = ver; *c; c++) *c = *c == '_' ? '.' : *c;
    bool versioned = ver[0] >= '0' && ver[0] <= '9';
    twin_functions(e->d_name, NULL, &cur);
    if (versioned) twin_functions(e->d_name, ver, &own);
    files++;
  }
  closedir(dir);
  report("twins at 1.20.0", &cur);
  report("twins at their own version", &own);
  assert_true(files >= 33);
  assert_int_equal(cur.differ, 0);
  assert_int_equal(own.differ, 0);
}

/* The header of what xrt writes at a version is that of StableHLO's own
 * artifact of the version: format, producer; and the reader takes it. */
static void test_format_matches_official(void **state) {
  (void)state;
  DIR *dir = opendir(XRT_TEST_VHLO_DIR);
  if (!dir) return;
  static const char *src =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n}\n";
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(src, strlen(src), NULL, &p), XRT_OK);
  int checked = 0;
  for (struct dirent *e; (e = readdir(dir));) {
    const char *nm = e->d_name;
    size_t nl = strlen(nm);
    if (strncmp(nm, "stablehlo_legalize_to_vhlo.", 27) || nl < 35 ||
        strcmp(nm + nl - 8, ".mlir.bc"))
      continue;
    char ver[32], path[4096];
    snprintf(ver, sizeof ver, "%.*s", (int)(nl - 8 - 27), nm + 27);
    for (char *c = ver; *c; c++) *c = *c == '_' ? '.' : *c;
    snprintf(path, sizeof path, "%s/%s", XRT_TEST_VHLO_DIR, nm);
    size_t n, m;
    char *real = tu_read_file(path, &n), *ours = NULL;
    assert_non_null(real);
    assert_int_equal(xrt_program_serialize(p, ver, &ours, &m), XRT_OK);
    size_t head = strlen(real + 5) + 6; /* magic, format, producer */
    if (m < head || memcmp(real, ours, head))
      fail_msg("%s: our header differs from the official one", ver);
    xrt_program *q = NULL;
    if (xrt_program_parse(ours, m, NULL, &q)) fail_msg("%s: %s", ver, xrt_last_error());
    xrt_program_release(q);
    free(real);
    free(ours);
    checked++;
  }
  closedir(dir);
  printf("  %d versions: header and format as StableHLO writes them\n", checked);
  assert_true(checked >= 32);
  xrt_program_release(p);
}

static void test_refusals(void **state) {
  (void)state;
  static const char *tan =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.tan %a : tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n}\n";
  static const char *acc =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = \"stablehlo.cosine\"(%a) {result_accuracy = "
      "#stablehlo.result_accuracy<atol = 1.0e-5, rtol = 0.0, ulps = 2, mode = "
      "#stablehlo.result_accuracy_mode<TOLERANCE>>} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n}\n";
  static const char *erf =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = chlo.erf %a : tensor<4xf32> -> tensor<4xf32>\n"
      "  func.return %0 : tensor<4xf32>\n}\n";
  xrt_program *p = NULL;
  char *b = NULL;
  size_t n;
  assert_int_equal(xrt_program_parse(tan, strlen(tan), NULL, &p), XRT_OK);
  assert_int_equal(xrt_program_serialize(p, "1.3.0", &b, &n), XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "stablehlo.tan");
  TU_ASSERT_CONTAINS(xrt_last_error(), "1.4.0");
  assert_null(b);
  assert_int_equal(xrt_program_serialize(p, "1.4.0", &b, &n), XRT_OK);
  free(b);
  assert_int_equal(xrt_program_serialize(p, "7.0.0", &b, &n), XRT_UNIMPLEMENTED);
  assert_int_equal(xrt_program_serialize(p, "one", &b, &n), XRT_INVALID_ARGUMENT);
  xrt_program_release(p);
  assert_int_equal(xrt_program_parse(acc, strlen(acc), NULL, &p), XRT_OK);
  assert_int_equal(xrt_program_serialize(p, "1.9.0", &b, &n), XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "result_accuracy");
  assert_int_equal(xrt_program_serialize(p, "1.10.0", &b, &n), XRT_OK);
  free(b);
  xrt_program_release(p);
  assert_int_equal(xrt_program_parse(erf, strlen(erf), NULL, &p), XRT_OK);
  assert_int_equal(xrt_program_serialize(p, NULL, &b, &n), XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "chlo.erf");
  xrt_program_release(p);
  assert_int_equal(xrt_program_serialize(NULL, NULL, &b, &n), XRT_INVALID_ARGUMENT);
}

/* Written at 1.0.0 with a large constant, compiled from the bytes, run. */
static void test_written_artifact_runs(void **state) {
  (void)state;
  enum { N = 4096 };
  size_t cap = 64 + 40 * N;
  char *src = malloc(cap + 200);
  int k = snprintf(src, cap, "module @m { func.func @main(%%a: tensor<%dxf32>) -> "
                   "tensor<%dxf32> {\n  %%c = stablehlo.constant dense<[", N, N);
  for (int i = 0; i < N; i++) k += snprintf(src + k, cap - (size_t)k, "%s%d.5", i ? ", " : "", i);
  snprintf(src + k, cap + 200 - (size_t)k, "]> : tensor<%dxf32>\n  %%0 = stablehlo.add "
           "%%a, %%c : tensor<%dxf32>\n  func.return %%0 : tensor<%dxf32>\n} }\n", N, N, N);
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(src, strlen(src), NULL, &p), XRT_OK);
  char *b = NULL;
  size_t n;
  assert_int_equal(xrt_program_serialize(p, "1.0.0", &b, &n), XRT_OK);
  assert_true(n > N * 4 && n < N * 4 + 1024); /* the constant's bytes, once */
  xrt_client *c = NULL;
  xrt_executable *exe = NULL;
  xrt_buffer *arg = NULL, *out = NULL;
  assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_shape sh = TU_SHAPE(XRT_F32, N);
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; i++) x[i] = (float)i;
  assert_int_equal(xrt_compile(c, b, n, NULL, &exe), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, dev, &sh, x, &arg), XRT_OK);
  assert_int_equal(xrt_execute(exe, dev, &arg, 1, &out, 1, NULL), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(out, y, N * sizeof *y), XRT_OK);
  for (int i = 0; i < N; i++) assert_true(y[i] == 2.0f * (float)i + 0.5f);
  xrt_client_release(c);
  xrt_program_release(p);
  free(x);
  free(y);
  free(b);
  free(src);
}

int main(void) {
  ir_compare_portable = true;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_examples),
      cmocka_unit_test(test_interpreter_chunks),
      cmocka_unit_test(test_versioned_twins),
      cmocka_unit_test(test_format_matches_official),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_written_artifact_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
