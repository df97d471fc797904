/*
 * test_vhlo_print.c - xrt_program_print of StableHLO's legalize-to-VHLO
 * test (every op, type and attribute of each version) reads the same from
 * a portable artifact as from its text twin: for each of the versioned
 * artifacts stablehlo_legalize_to_vhlo.X_Y_Z.mlir.bc, the whole module
 * parses through the public API from both forms and prints byte for byte
 * alike (the text `xrt print` writes).  The data comes from
 * XRT_TEST_VHLO_DIR (../shared/stablehlo/vhlo from the repository root,
 * else /work/shared/stablehlo/vhlo); without it that test is skipped.
 *
 * The constructs that needed (each also checked here on small programs,
 * without the data): ops xrt reads but does not run (einsum, the
 * deprecated and async ops) and types it does not run (index elements,
 * memref, !stablehlo.future), printed back and refused at compile with
 * UNIMPLEMENTED at their location; bounded tensors in both spellings;
 * attributes at StableHLO's default left out, as an artifact holds them;
 * one literal form for splats; and the artifact writer for all of these.
 */
#include "test_util.h"

#include <dirent.h>

#ifndef XRT_TEST_VHLO_DIR
#define XRT_TEST_VHLO_DIR "../shared/stablehlo/vhlo"
#endif

/* The directory of the artifacts, or NULL. */
static const char *vhlo_dir(void) {
  static const char *const dirs[] = {XRT_TEST_VHLO_DIR,
                                     "/work/shared/stablehlo/vhlo"};
  for (size_t i = 0; i < TU_COUNT(dirs); i++) {
    DIR *d = opendir(dirs[i]);
    if (d) {
      closedir(d);
      return dirs[i];
    }
  }
  return NULL;
}

/* Parses n bytes (text or artifact) named file and prints the program;
 * fails the test with the parser's message otherwise. */
static char *print_of(const char *data, size_t n, const char *file,
                      size_t *len) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = file;
  xrt_program *p = NULL;
  xrt_status s = xrt_program_parse(data, n, &o, &p);
  if (s) fail_msg("%s: %s", file, xrt_last_error());
  char *text = NULL;
  assert_int_equal(xrt_program_print(p, &text, len), XRT_OK);
  assert_non_null(text);
  assert_int_equal(strlen(text), *len);
  xrt_program_release(p);
  return text;
}

static char *print_text(const char *src) {
  size_t n;
  return print_of(src, strlen(src), "<input>", &n);
}

/* ---------------------------------------------------------------------
 * The versioned artifacts and their twins
 * ------------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_artifacts_print_as_twins(void **state) {
  (void)state;
  const char *dir = vhlo_dir();
  if (!dir) {
    print_message("skipped: no %s\n", XRT_TEST_VHLO_DIR);
    skip();
  }
  static const char pre[] = "stablehlo_legalize_to_vhlo.", suf[] = ".mlir.bc";
  char *names[64];
  int n = 0;
  DIR *d = opendir(dir);
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d)) && n < 64;) {
    size_t l = strlen(e->d_name);
    if (l > sizeof pre + sizeof suf &&
        !strncmp(e->d_name, pre, sizeof pre - 1) &&
        !strcmp(e->d_name + l - (sizeof suf - 1), suf)) {
      names[n] = malloc(l + 1);
      assert_non_null(names[n]);
      memcpy(names[n++], e->d_name, l + 1);
    }
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_names);
  assert_true(n >= 32);
  for (int i = 0; i < n; i++) {
    char path[4096];
    size_t bn, tn, pb, pt;
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    char *bc = tu_read_file(path, &bn);
    path[strlen(path) - 3] = 0; /* the twin: without ".bc" */
    char *twin = tu_read_file(path, &tn);
    char *from_bc = print_of(bc, bn, names[i], &pb);
    char *from_twin = print_of(twin, tn, names[i], &pt);
    if (pb != pt || memcmp(from_bc, from_twin, pb)) {
      size_t k = 0;
      while (k < pb && k < pt && from_bc[k] == from_twin[k]) k++;
      size_t at = k > 60 ? k - 60 : 0;
      fail_msg("%s: the artifact and its twin print differently at byte %zu:\n"
               "artifact: %.120s\ntwin:     %.120s", names[i], k, from_bc + at,
               from_twin + at);
    }
    /* what print wrote reads back to the same text */
    size_t pr;
    char *again = print_of(from_twin, pt, "printed", &pr);
    assert_int_equal(pr, pt);
    assert_memory_equal(again, from_twin, pt);
    if (!strcmp(names[i], "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc")) {
      TU_ASSERT_CONTAINS(
          from_bc,
          "\"stablehlo.einsum\"(%arg0, %arg1) {einsum_config = \"ab,bc->ac\"}");
      TU_ASSERT_CONTAINS(from_bc,
                         "func.func private @type_future_multiple() -> "
                         "!stablehlo.future<tensor<f32>, tensor<i32>>");
      TU_ASSERT_CONTAINS(from_bc, "(%arg0: memref<2xf32>) -> memref<2xf32>");
      TU_ASSERT_CONTAINS(from_bc,
                         "(%arg0: tensor<?x?xf32, #stablehlo.bounds<16, ?>>)");
      TU_ASSERT_CONTAINS(from_bc, "(%arg0: tensor<1xindex>) -> tensor<?xf32>");
      TU_ASSERT_CONTAINS(
          from_bc, "result_tilings = [[dense<[8, 128]> : tensor<2xindex>]]");
      TU_ASSERT_CONTAINS(
          from_bc, "%3 = \"stablehlo.async_done\"(%0) : "
                   "(!stablehlo.future<tensor<4x4xf32>>) -> tensor<4x4xf32>");
    }
    free(again);
    free(from_bc);
    free(from_twin);
    free(bc);
    free(twin);
    free(names[i]);
  }
}

/* ---------------------------------------------------------------------
 * What xrt reads but does not run
 * ------------------------------------------------------------------- */

/* Parses src, asserts its print, and that compiling it is UNIMPLEMENTED
 * with message msg. */
static void read_not_run(const char *src, const char *printed,
                         const char *msg) {
  char *t = print_text(src);
  assert_string_equal(t, printed);
  free(t);
  xrt_client *c = NULL;
  xrt_executable *e = NULL;
  assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
  assert_int_equal(xrt_compile(c, src, strlen(src), NULL, &e),
                   XRT_UNIMPLEMENTED);
  assert_null(e);
  assert_string_equal(xrt_last_error(), msg);
  xrt_client_release(c);
}

static void test_ops_read_not_run(void **state) {
  (void)state;
  read_not_run("func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> "
               "tensor<2x2xf32> {\n"
               "  %0 = stablehlo.einsum %a, %b, config = \"ab,bc->ac\" : "
               "(tensor<2x3xf32>, "
               "tensor<3x2xf32>) -> tensor<2x2xf32>\n"
               "  return %0 : tensor<2x2xf32>\n}\n",
               "module {\n"
               "  func.func @main(%arg0: tensor<2x3xf32>, %arg1: "
               "tensor<3x2xf32>) -> tensor<2x2xf32> {\n"
               "    %0 = \"stablehlo.einsum\"(%arg0, %arg1) {einsum_config = "
               "\"ab,bc->ac\"} : "
               "(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
               "    \"func.return\"(%0) : (tensor<2x2xf32>) -> ()\n  }\n}\n",
               "<input>:2:8: stablehlo.einsum: xrt does not run this op");
  /* an op xrt runs first, then one inside a region */
  read_not_run(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
      "  %1 = \"stablehlo.cross-replica-sum\"(%0) {replica_groups = "
      "dense<[[0]]> : "
      "tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %1 : tensor<4xf32>\n}\n",
      "module {\n"
      "  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    %0 = \"stablehlo.add\"(%arg0, %arg0) : (tensor<4xf32>, "
      "tensor<4xf32>) -> tensor<4xf32>\n"
      "    %1 = \"stablehlo.cross-replica-sum\"(%0) {replica_groups = "
      "dense<[[0]]> : "
      "tensor<1x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    \"func.return\"(%1) : (tensor<4xf32>) -> ()\n  }\n}\n",
      "<input>:3:8: stablehlo.cross-replica-sum: xrt does not run this op");
  read_not_run("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
               "  %0 = \"stablehlo.async_start\"(%a) ({\n"
               "  ^bb0(%x: tensor<4xf32>):\n"
               "    \"stablehlo.return\"(%x) : (tensor<4xf32>) -> ()\n"
               "  }) : (tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>>\n"
               "  %1 = \"stablehlo.async_done\"(%0) : "
               "(!stablehlo.future<tensor<4xf32>>) -> tensor<4xf32>\n"
               "  return %1 : tensor<4xf32>\n}\n",
               "module {\n"
               "  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
               "    %0 = \"stablehlo.async_start\"(%arg0) ({\n"
               "    ^bb0(%arg1: tensor<4xf32>):\n"
               "      \"stablehlo.return\"(%arg1) : (tensor<4xf32>) -> ()\n"
               "    }) : (tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>>\n"
               "    %1 = \"stablehlo.async_done\"(%0) : "
               "(!stablehlo.future<tensor<4xf32>>) -> tensor<4xf32>\n"
               "    \"func.return\"(%1) : (tensor<4xf32>) -> ()\n  }\n}\n",
               "<input>:2:8: stablehlo.async_start: xrt does not run this op");
}

static void test_types_read_not_run(void **state) {
  (void)state;
  /* index elements: the constant's value reads as i64 (as every
   * attribute's index does) and prints as its result's type */
  read_not_run("func.func @main() -> tensor<2xindex> {\n"
               "  %0 = stablehlo.constant dense<[3, -1]> : tensor<2xindex>\n"
               "  return %0 : tensor<2xindex>\n}\n",
               "module {\n"
               "  func.func @main() -> tensor<2xindex> {\n"
               "    %0 = \"stablehlo.constant\"() {value = dense<[3, -1]> : "
               "tensor<2xindex>} : "
               "() -> tensor<2xindex>\n"
               "    \"func.return\"(%0) : (tensor<2xindex>) -> ()\n  }\n}\n",
               "<input>:1:1: @main: result 0: xrt does not run tensors of "
               "index elements");
  read_not_run(
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = \"stablehlo.custom_call\"(%a) {call_target_name = \"Pin\"} : "
      "(tensor<2xf32>) -> memref<2xf32>\n"
      "  %1 = \"stablehlo.custom_call\"(%0) {call_target_name = \"Unpin\"} : "
      "(memref<2xf32>) -> tensor<2xf32>\n"
      "  return %1 : tensor<2xf32>\n}\n",
      "module {\n"
      "  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "    %0 = \"stablehlo.custom_call\"(%arg0) {call_target_name = \"Pin\"} "
      ": "
      "(tensor<2xf32>) -> memref<2xf32>\n"
      "    %1 = \"stablehlo.custom_call\"(%0) {call_target_name = \"Unpin\"} : "
      "(memref<2xf32>) -> tensor<2xf32>\n"
      "    \"func.return\"(%1) : (tensor<2xf32>) -> ()\n  }\n}\n",
      "<input>:2:8: stablehlo.custom_call: result 0: xrt does not run memref "
      "types");
  read_not_run("func.func @main(%f: !stablehlo.future<tensor<f32>, "
               "tensor<2xi32>>) -> () {\n"
               "  return\n}\n",
               "module {\n"
               "  func.func @main(%arg0: !stablehlo.future<tensor<f32>, "
               "tensor<2xi32>>) {\n"
               "    \"func.return\"() : () -> ()\n  }\n}\n",
               "<input>:1:1: @main: argument 0: xrt does not run "
               "!stablehlo.future types");
  /* what StableHLO has no form for stays refused where it is written */
  tu_parse_fails("func.func @main(%a: tensor<*xf32>) -> () {\n  return\n}\n",
                 NULL, XRT_UNIMPLEMENTED,
                 "<input>:1:28:", "unranked tensors are not supported");
  tu_parse_fails("func.func @main(%a: memref<*xf32>) -> () {\n  return\n}\n",
                 NULL, XRT_UNIMPLEMENTED,
                 "<input>:1:28:", "unranked memrefs are not supported");
  tu_parse_fails("func.func @main(%a: memref<2xf32, 1>) -> () {\n  return\n}\n",
                 NULL, XRT_UNIMPLEMENTED, "<input>:1:33:",
                 "memref layouts and memory spaces are not supported");
  tu_parse_fails("func.func @main(%a: !stablehlo.future<tensor<f32>) -> () {\n"
                 "  return\n}\n", NULL, XRT_INVALID_ARGUMENT, "<input>:1:50:",
                 "expected '>'");
}

/* ---------------------------------------------------------------------
 * Bounded tensors
 * ------------------------------------------------------------------- */

static void test_bounds(void **state) {
  (void)state;
  static const char *const forms[] = {
      "func.func @main(%a: tensor<?x3xf32, #stablehlo.bounds<8, ?>>) -> "
      "tensor<?x3xf32, #stablehlo.bounds<8, ?>> {\n"
      "  return %a : tensor<?x3xf32, #stablehlo.bounds<8, ?>>\n}\n",
      "func.func @main(%a: tensor<?x3xf32, #stablehlo.type_extensions<bounds = "
      "[8, ?]>>) -> "
      "tensor<?x3xf32, #stablehlo.bounds<8, ?>> {\n"
      "  return %a : tensor<?x3xf32, #stablehlo.type_extensions<bounds = [8, "
      "?]>>\n}\n"};
  for (size_t i = 0; i < TU_COUNT(forms); i++) {
    char *t = print_text(forms[i]);
    assert_string_equal(
        t,
        "module {\n"
        "  func.func @main(%arg0: tensor<?x3xf32, #stablehlo.bounds<8, ?>>) -> "
        "tensor<?x3xf32, #stablehlo.bounds<8, ?>> {\n"
        "    \"func.return\"(%arg0) : (tensor<?x3xf32, #stablehlo.bounds<8, "
        "?>>) -> ()\n"
        "  }\n}\n");
    free(t);
  }
  /* a bounded type is no unbounded one */
  tu_parse_fails("func.func @main(%a: tensor<?xf32, #stablehlo.bounds<8>>) -> "
                 "tensor<?xf32> {\n"
                 "  return %a : tensor<?xf32>\n}\n",
                 NULL, XRT_INVALID_ARGUMENT, "<input>:2:10:",
                 "use of value '%a' expects type tensor<?xf32> but it "
                 "has type tensor<?xf32, #stablehlo.bounds<8>>");
  tu_parse_fails(
      "func.func @main(%a: tensor<?x3xf32, #stablehlo.bounds<8>>) -> () {\n"
      "  return\n}\n",
      NULL, XRT_INVALID_ARGUMENT,
      "<input>:1:37:", "1 bounds for a tensor of rank 2");
  tu_parse_fails(
      "func.func @main(%a: tensor<?x3xf32, #stablehlo.bounds<8, 4>>) -> () {\n"
      "  return\n}\n",
      NULL, XRT_INVALID_ARGUMENT, "<input>:1:58:",
      "static dimension 1 cannot have a bound (its bound must be ?)");
  tu_parse_fails(
      "func.func @main(%a: tensor<?xf32, #stablehlo.bounds<-2>>) -> () {\n"
      "  return\n}\n",
      NULL, XRT_INVALID_ARGUMENT, "<input>:1:53:", "a bound must be ? or >= 0");
  /* it runs as any shape-polymorphic program */
  static const char *const src =
      "func.func @main(%a: tensor<?xf32, #stablehlo.bounds<4>>) -> "
      "tensor<?xf32, #stablehlo.bounds<4>> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<?xf32, #stablehlo.bounds<4>>\n"
      "  return %0 : tensor<?xf32, #stablehlo.bounds<4>>\n}\n";
  xrt_client *c = NULL;
  xrt_executable *e = NULL;
  xrt_buffer *in = NULL, *out = NULL;
  assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  xrt_shape sh = TU_SHAPE(XRT_F32, 3);
  o.num_arg_shapes = 1;
  o.arg_shapes = &sh;
  assert_int_equal(xrt_compile(c, src, strlen(src), &o, &e), XRT_OK);
  float x[3] = {1.5f, -2.0f, 3.0f}, y[3] = {0};
  xrt_device *dev = xrt_client_device(c, 0);
  assert_int_equal(xrt_buffer_from_host(c, dev, &sh, x, &in), XRT_OK);
  assert_int_equal(xrt_execute(e, dev, &in, 1, &out, 1, NULL), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(out, y, sizeof y), XRT_OK);
  assert_true(y[0] == 3.0f && y[1] == -4.0f && y[2] == 6.0f);
  xrt_client_release(c);
}

/* ---------------------------------------------------------------------
 * One form for one program
 * ------------------------------------------------------------------- */

static void test_canonical_forms(void **state) {
  (void)state;
  /* attributes at StableHLO's default are left out, as an artifact holds
   * them; a literal of equal elements is a splat, one of one element a
   * list (at rank 0, a splat) */
  char *a = print_text(
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %c = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf32>\n"
      "  %d = stablehlo.constant dense<\"0x0000803F0000803F\"> : "
      "tensor<2xf32>\n"
      "  %e = stablehlo.constant dense<7> : tensor<1xi32>\n"
      "  %0 = \"stablehlo.custom_call\"(%a) {api_version = 1 : i32, "
      "call_target_name = \"f\", "
      "has_side_effect = false, result_layouts = [], backend_config = \"\"} : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "  %1 = \"stablehlo.exponential\"(%0) {result_accuracy = "
      "#stablehlo.result_accuracy<"
      "atol = 0.0, rtol = 0.0, ulps = 0, mode = "
      "#stablehlo.result_accuracy_mode<DEFAULT>>} : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "  %2 = stablehlo.add %1, %c : tensor<2xf32>\n"
      "  return %2 : tensor<2xf32>\n}\n");
  char *b = print_text(
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %c = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
      "  %d = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
      "  %e = stablehlo.constant dense<[7]> : tensor<1xi32>\n"
      "  %0 = stablehlo.custom_call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  %1 = stablehlo.exponential %0 : tensor<2xf32>\n"
      "  %2 = stablehlo.add %1, %c : tensor<2xf32>\n"
      "  return %2 : tensor<2xf32>\n}\n");
  assert_string_equal(a, b);
  assert_string_equal(
      a,
      "module {\n"
      "  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "    %0 = \"stablehlo.constant\"() {value = dense<1.0> : tensor<2xf32>} "
      ": () -> tensor<2xf32>\n"
      "    %1 = \"stablehlo.constant\"() {value = dense<1.0> : tensor<2xf32>} "
      ": () -> tensor<2xf32>\n"
      "    %2 = \"stablehlo.constant\"() {value = dense<[7]> : tensor<1xi32>} "
      ": () -> tensor<1xi32>\n"
      "    %3 = \"stablehlo.custom_call\"(%arg0) {call_target_name = \"f\"} : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "    %4 = \"stablehlo.exponential\"(%3) : (tensor<2xf32>) -> "
      "tensor<2xf32>\n"
      "    %5 = \"stablehlo.add\"(%4, %0) : (tensor<2xf32>, tensor<2xf32>) -> "
      "tensor<2xf32>\n"
      "    \"func.return\"(%5) : (tensor<2xf32>) -> ()\n  }\n}\n");
  free(a);
  free(b);
  /* not the default: kept */
  a = print_text("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  %0 = stablehlo.custom_call @f(%a) {api_version = 2 : i32, "
                 "has_side_effect = true} : (tensor<2xf32>) -> tensor<2xf32>\n"
                 "  return %0 : tensor<2xf32>\n}\n");
  TU_ASSERT_CONTAINS(a, "{api_version = 2 : i32, call_target_name = \"f\", "
                        "has_side_effect = true}");
  free(a);
  /* a default is still checked as written: window_strides of ones, but
   * one too many */
  tu_parse_fails(
      "func.func @main(%x: tensor<1x4x6xf32>, %w: tensor<2x4x3xf32>) -> "
      "tensor<1x2x4xf32> {\n  %0 = \"stablehlo.convolution\"(%x, %w) {"
      "dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, "
      "window_strides = array<i64: 1, 1>} : (tensor<1x4x6xf32>, "
      "tensor<2x4x3xf32>) -> tensor<1x2x4xf32>\n  func.return %0 : "
      "tensor<1x2x4xf32>\n}\n",
      NULL, XRT_INVALID_ARGUMENT,
      "<input>:2:8:", "window_strides must have 1 entries, not 2");
}

/* ---------------------------------------------------------------------
 * The artifact writer
 * ------------------------------------------------------------------- */

static void test_serialize_round_trip(void **state) {
  (void)state;
  static const char *const src =
      "func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>, %s: "
      "tensor<1xindex>, "
      "%m: memref<2xf32>, %q: tensor<?xf32, #stablehlo.bounds<4>>) -> "
      "!stablehlo.future<tensor<8x8xf32>> {\n"
      "  %0 = stablehlo.einsum %a, %b, config = \"ab,bc->ac\" : "
      "(tensor<8x16xf32>, "
      "tensor<16x8xf32>) -> tensor<8x8xf32>\n"
      "  %1 = stablehlo.unary_einsum %0, config = \"ab->a\" : "
      "(tensor<8x8xf32>) -> tensor<8xf32>\n"
      "  %2 = \"stablehlo.torch_index_select\"(%a, %s) {batch_dims = 0 : i64, "
      "dim = 1 : i64} : "
      "(tensor<8x16xf32>, tensor<1xindex>) -> tensor<8x1xf32>\n"
      "  %3 = \"stablehlo.async_start\"(%0) ({\n"
      "  ^bb0(%x: tensor<8x8xf32>):\n"
      "    \"stablehlo.return\"(%x) : (tensor<8x8xf32>) -> ()\n"
      "  }) : (tensor<8x8xf32>) -> !stablehlo.future<tensor<8x8xf32>>\n"
      "  return %3 : !stablehlo.future<tensor<8x8xf32>>\n}\n";
  xrt_program *p = NULL, *q = NULL;
  assert_int_equal(xrt_program_parse(src, strlen(src), NULL, &p), XRT_OK);
  char *bytes = NULL;
  size_t n = 0, n1, n2;
  assert_int_equal(xrt_program_serialize(p, NULL, &bytes, &n), XRT_OK);
  assert_int_equal(xrt_program_parse(bytes, n, NULL, &q), XRT_OK);
  char *t1 = NULL, *t2 = NULL;
  assert_int_equal(xrt_program_print(p, &t1, &n1), XRT_OK);
  assert_int_equal(xrt_program_print(q, &t2, &n2), XRT_OK);
  assert_string_equal(t1, t2);
  TU_ASSERT_CONTAINS(
      t1, "\"stablehlo.unary_einsum\"(%0) {einsum_config = \"ab->a\"}");
  free(t1);
  free(t2);
  free(bytes);
  xrt_program_release(q);
  /* the versions that have no such types */
  bytes = (char *)"x";
  assert_int_equal(xrt_program_serialize(p, "1.14.0", &bytes, &n),
                   XRT_UNIMPLEMENTED);
  assert_null(bytes);
  assert_string_equal(
      xrt_last_error(),
      "serializing at StableHLO 1.14.0: "
      "!stablehlo.future types are not in StableHLO 1.14.0 (they "
      "appeared in 1.15.0)");
  xrt_program_release(p);
  static const char *const mem =
      "func.func @main(%m: memref<2xf32>) -> memref<2xf32> {\n  return %m : "
      "memref<2xf32>\n}\n";
  assert_int_equal(xrt_program_parse(mem, strlen(mem), NULL, &p), XRT_OK);
  assert_int_equal(xrt_program_serialize(p, "1.12.0", &bytes, &n),
                   XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "memref types are not in StableHLO 1.12.0 "
                     "(they appeared in 1.13.0)");
  assert_int_equal(xrt_program_serialize(p, "1.13.0", &bytes, &n), XRT_OK);
  free(bytes);
  xrt_program_release(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_artifacts_print_as_twins),
      cmocka_unit_test(test_ops_read_not_run),
      cmocka_unit_test(test_types_read_not_run),
      cmocka_unit_test(test_bounds),
      cmocka_unit_test(test_canonical_forms),
      cmocka_unit_test(test_serialize_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
