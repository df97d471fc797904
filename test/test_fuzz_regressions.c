/*
 * test_fuzz_regressions.c - every finding of the fuzzers (fuzz/), kept as a
 * test: the inputs in fuzz/regressions/ replayed through the public API,
 * and the plugin-table findings rebuilt as tables.  Run from the
 * repository root (make test does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_plugin_abi.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define REGRESSIONS "fuzz/regressions/"

/* fuzz_program: a broadcast without an operand passed the verifier and
 * crashed the simulator's fusion planner. */
static void test_broadcast_without_operand(void **state) {
  (void)state;
  size_t len;
  char *text = tu_read_file(REGRESSIONS "fuzz_program-broadcast-no-operands",
                         &len);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "bcast.mlir";
  tu_parse_fails(text, &o, XRT_INVALID_ARGUMENT, "bcast.mlir:5:13:",
                 "expects 1 operand(s), got 0");
  free(text);
}

/* fuzz_program: a dot without operands passed the verifier, which had no
 * rule for dot (nor for get_dimension_size), and crashed the simulator's
 * planner. */
static void test_dot_without_operands(void **state) {
  (void)state;
  size_t len;
  char *text = tu_read_file(REGRESSIONS "fuzz_program-dot-no-operands", &len);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "dot.mlir";
  tu_parse_fails(text, &o, XRT_INVALID_ARGUMENT, "dot.mlir:4:8:",
                 "expects 2 operand(s), got 0");
  free(text);
  tu_parse_fails_at(
      "func.func @main() {\n"
      "  %r = \"stablehlo.get_dimension_size\"() {dimension = 0 : i64} : "
      "() -> tensor<i32>\n"
      "  func.return\n"
      "}\n",
      "<input>:2:", "expects 1 operand(s), got 0");
}

/* The rules dot and get_dimension_size got: shapes, dimension, type. */
static void test_dot_and_dimension_size_rules(void **state) {
  (void)state;
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {\n"
      "  %r = stablehlo.dot %a, %b : (tensor<2x3xf32>, tensor<2x4xf32>) -> "
      "tensor<2x4xf32>\n"
      "  func.return\n"
      "}\n",
      "<input>:2:", "lhs dimension 1 (3) and rhs dimension 0 (2) must match");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {\n"
      "  %r = stablehlo.dot %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> "
      "tensor<2x5xf32>\n"
      "  func.return\n"
      "}\n",
      "<input>:2:", "result dimension 1 is 5, expected 4");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) {\n"
      "  %r = stablehlo.dot %a, %b : (tensor<3xf32>, tensor<3xf32>) -> "
      "tensor<1xf32>\n"
      "  func.return\n"
      "}\n",
      "<input>:2:", "result rank 1, expected 0");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2x3xf32>) {\n"
      "  %r = stablehlo.get_dimension_size %a, dim = 2 : (tensor<2x3xf32>) "
      "-> tensor<i32>\n"
      "  func.return\n"
      "}\n",
      "<input>:2:", "dimension attribute is missing or out of range");
  tu_parse_fails_at(
      "func.func @main(%a: tensor<2x3xf32>) {\n"
      "  %r = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x3xf32>) "
      "-> tensor<f32>\n"
      "  func.return\n"
      "}\n",
      "<input>:2:", "result must be tensor<i32>");
}

/* A well-formed dot still runs: r = a (2x3) . b (3x2), by hand. */
static void test_dot_runs(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, -1, 2, 0, 0.5f, 3};
  tu_out out;
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 2, 3), a}, {TU_SHAPE(XRT_F32, 3, 2), b}};
  xrt_status s = tu_run(
      c,
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> "
      "tensor<2x2xf32> {\n"
      "  %r = stablehlo.dot %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> "
      "tensor<2x2xf32>\n"
      "  func.return %r : tensor<2x2xf32>\n"
      "}\n",
      2, in, &out);
  assert_int_equal(s, XRT_OK);
  /* [1 2 3].[1 2 .5] = 6.5, [1 2 3].[-1 0 3] = 8; [4 5 6]: 17, 14 */
  const float want[4] = {6.5f, 8, 17, 14};
  assert_memory_equal(out.data[0], want, sizeof want);
  tu_out_free(&out);
}

/* Every stablehlo op in generic form with 0 to 3 operands and results of
 * five kinds, compiled on the simulator: each returns a status (the sweep
 * that found the two ops above without an arity rule). */
static void test_generic_arity_sweep(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const char *results[][2] = {
      {"%r = ", "tensor<3xi16>"}, {"", "()"},
      {"%r:2 = ", "(tensor<3xi16>, tensor<3xi16>)"},
      {"%r = ", "tensor<i16>"}, {"%r = ", "tensor<3xf32>"}};
  int tried = 0, rejected = 0;
  for (int op = 0; op < XRT_OP_COUNT; op++) {
    const char *name = xrt_opcode_name((xrt_opcode)op);
    if (!name || strncmp(name, "stablehlo.", 10) != 0) continue;
    for (int n = 0; n <= 3; n++)
      for (size_t k = 0; k < sizeof results / sizeof results[0]; k++) {
        char ops[64] = "", tys[128] = "", text[512];
        for (int i = 0; i < n; i++) {
          strcat(ops, i ? ", %c" : "%c");
          strcat(tys, i ? ", tensor<3xi16>" : "tensor<3xi16>");
        }
        snprintf(text, sizeof text,
                 "func.func @main() {\n"
                 "  %%c = stablehlo.constant dense<[1, 2, 3]> : "
                 "tensor<3xi16>\n"
                 "  %s\"%s\"(%s) : (%s) -> %s\n"
                 "  func.return\n"
                 "}\n",
                 results[k][0], name, ops, tys, results[k][1]);
        xrt_executable *e = NULL;
        xrt_status s = xrt_compile(c, text, strlen(text), NULL, &e);
        if (s) {
          assert_null(e);
          assert_true(xrt_last_error()[0] != 0);
          rejected++;
        }
        xrt_executable_release(e);
        tried++;
      }
  }
  assert_true(tried >= 100 * 20);
  assert_true(rejected > tried / 2);
}

/* The verifier's other broadcast rules: rank and dimensions. */
static void test_broadcast_shapes(void **state) {
  (void)state;
  tu_parse_fails_at(
      "func.func @main(%x: tensor<3xf32>) -> tensor<2x4xf32> {\n"
      "  %y = stablehlo.broadcast %x, sizes = [2] : (tensor<3xf32>) -> "
      "tensor<2x4xf32>\n"
      "  func.return %y : tensor<2x4xf32>\n"
      "}\n",
      "<input>:2:", "result dimension 1 is 4, expected 3");
  tu_parse_fails_at(
      "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
      "  %y = stablehlo.broadcast %x, sizes = [2] : (tensor<3xf32>) -> "
      "tensor<3xf32>\n"
      "  func.return %y : tensor<3xf32>\n"
      "}\n",
      "<input>:2:", "result rank 1 is not 1 broadcast sizes");
}

/* A well-formed broadcast still runs: y[i][j] = x[j]. */
static void test_broadcast_runs(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const float x[3] = {1.5f, -2, 7};
  tu_out out;
  tu_in in = {TU_SHAPE(XRT_F32, 3), x};
  xrt_status s = tu_run(
      c,
      "func.func @main(%x: tensor<3xf32>) -> tensor<2x3xf32> {\n"
      "  %y = stablehlo.broadcast %x, sizes = [2] : (tensor<3xf32>) -> "
      "tensor<2x3xf32>\n"
      "  func.return %y : tensor<2x3xf32>\n"
      "}\n",
      1, &in, &out);
  assert_int_equal(s, XRT_OK);
  const float *y = (const float *)out.data[0];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) assert_true(y[i * 3 + j] == x[j]);
  tu_out_free(&out);
}

/* fuzz_npy: headers declaring more data than the file holds made xrt
 * allocate what the header claimed (up to 4e18 bytes); an empty shape
 * whose other dimensions overflow overflowed the strides. */
static void npy_rejected(xrt_client *c, const char *name, const char *sub) {
  char path[256];
  snprintf(path, sizeof path, REGRESSIONS "%s", name);
  xrt_buffer *b = NULL;
  xrt_status s = xrt_buffer_from_npy(c, xrt_client_device(c, 0), path, &b);
  tu_save_error();
  assert_int_equal(s, XRT_INVALID_ARGUMENT);
  assert_null(b);
  TU_ASSERT_CONTAINS(tu_msg, sub);
  xrt_sharding_spec spec;
  xrt_sharding_spec_init(&spec, 0);
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_variable_format fmt = {&spec, &dev, 1};
  xrt_variable *v = NULL;
  s = xrt_variable_create_from_npy(c, "v", path, &fmt, &v);
  tu_save_error();
  assert_int_equal(s, XRT_INVALID_ARGUMENT);
  assert_null(v);
}

static void test_npy_findings(void **state) {
  xrt_client *c = (xrt_client *)*state;
  npy_rejected(c, "fuzz_npy-huge-shape-malloc", "");
  npy_rejected(c, "fuzz_npy-declared-size-oom", "truncated");
  npy_rejected(c, "fuzz_npy-shape-int-overflow", "too large");
}

/* The same rule for shapes the API is handed: an empty array whose other
 * dimensions overflow is refused, not overflowed. */
static void test_empty_shape_overflow(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_shape sh = TU_SHAPE(XRT_F32, 0, INT64_MAX / 2, 4);
  xrt_buffer *b = NULL;
  assert_int_equal(
      xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, NULL, &b),
      XRT_INVALID_ARGUMENT);
  assert_null(b);
}

/* fuzz_plugin_table: a table without client_destroy (or buffer_free, or
 * executable_destroy) leaked what it made; now a client of such a plugin
 * is refused before it exists.  which: 0, 1, 2 for the three. */
static void plugin_cannot_free(int which, const char *fn) {
  xrt_plugin_api t = tu_sim_table("nofree");
  if (which == 0) t.client_destroy = NULL;
  if (which == 1) t.buffer_free = NULL;
  if (which == 2) t.executable_destroy = NULL;
  xrt_context *x = tu_context_with(&t);
  xrt_client_options o = tu_client_options(x, "nofree", 1);
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_UNIMPLEMENTED);
  assert_null(c);
  tu_save_error();
  TU_ASSERT_CONTAINS(tu_msg, fn);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

static void test_plugin_without_free_functions(void **state) {
  (void)state;
  plugin_cannot_free(0, "client_destroy");
  plugin_cannot_free(1, "buffer_free");
  plugin_cannot_free(2, "executable_destroy");
}

/* fuzz_plugin_table: an error message filling the whole buffer with no
 * NUL was read past its end. */
static xrt_status execute_unterminated(void *client,
                                       const xrt_plugin_execute_args *args,
                                       xrt_plugin_error *err) {
  (void)client;
  (void)args;
  memset(err->message, 'x', sizeof err->message);
  return XRT_INTERNAL;
}

static void test_plugin_unterminated_message(void **state) {
  (void)state;
  xrt_plugin_api t = tu_sim_table("noterm");
  t.execute = execute_unterminated;
  xrt_context *x = tu_context_with(&t);
  xrt_client *c = tu_client_of(x, "noterm", 1);
  const float a[2] = {1, 2};
  tu_out out;
  tu_in in = {TU_SHAPE(XRT_F32, 2), a};
  xrt_status s = tu_run(c,
                        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                        "  %b = stablehlo.add %a, %a : tensor<2xf32>\n"
                        "  func.return %b : tensor<2xf32>\n"
                        "}\n",
                        1, &in, &out);
  assert_int_equal(s, XRT_INTERNAL);
  tu_save_error();
  TU_ASSERT_CONTAINS(tu_msg, "xxxxxxxx");
  assert_true(strlen(tu_msg) < sizeof tu_msg - 1);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* fuzz_cache_file: the simulator's serialized bytes of the fuzz program
 * with multiply's opcode changed to reduce and the hashes resealed (the
 * input's selector 3; XRT_FUZZ_RESEAL_SIM=1).  The reader checked only
 * the hash, so the planner met a reduce without a region and crashed.
 * executable_deserialize now validates the module and refuses it. */
static void test_cache_file_opcode_changed(void **state) {
  (void)state;
  size_t n = 0;
  unsigned char *f = (unsigned char *)tu_read_file(
      REGRESSIONS "fuzz_cache_file-opcode-changed-resealed", &n);
  assert_non_null(f);
  /* After the selector byte: the cache file; the simulator's bytes run
   * from its magic to the file's 8-byte checksum. */
  size_t m = 1;
  while (m + 32 <= n && memcmp(f + m, "XSIMEXE1", 8) != 0) m++;
  assert_true(m + 32 + 8 <= n);
  unsigned char *b = f + m;
  size_t len = n - 8 - m;
  uint64_t h = XXH3_64bits(b + 24, len - 24);
  memcpy(b + 16, &h, sizeof h);
  const xrt_plugin_api *api = xrt_sim_plugin_api();
  void *pc = tu_sim_plugin_client(1 << 24);
  xrt_plugin_error err;
  int32_t device = 0;
  xrt_plugin_compile_args a = tu_plugin_compile_args(NULL, -1, &device);
  /* What the core expects of the fuzz target's @main (ABI 1.2):
   * tensor<4xf32> -> (tensor<4xf32>, tensor<f32>), no host calls. */
  xrt_shape ins[1] = {{XRT_F32, 1, {4}}};
  xrt_shape outs[2] = {{XRT_F32, 1, {4}}, {XRT_F32, 0, {0}}};
  a.num_inputs = 1;
  a.num_outputs = 2;
  a.input_shapes = ins;
  a.output_shapes = outs;
  void *exe = NULL;
  assert_int_equal(api->executable_deserialize(pc, &a, b, len, &exe, &err),
                   XRT_INVALID_ARGUMENT);
  assert_null(exe);
  TU_ASSERT_CONTAINS(err.message, "op name does not match its code");
  /* The same bytes with the opcode put back load. */
  const char *name = "stablehlo.multiply";
  unsigned char *at = b;
  while (memcmp(at, name, strlen(name)) != 0) at++;
  int32_t code = XRT_OP_MULTIPLY;
  memcpy(at - 8, &code, sizeof code);
  h = XXH3_64bits(b + 24, len - 24);
  memcpy(b + 16, &h, sizeof h);
  assert_int_equal(api->executable_deserialize(pc, &a, b, len, &exe, &err),
                   XRT_OK);
  api->executable_destroy(exe);
  api->client_destroy(pc);
  free(f);
}

/* fuzz_program: check.expect_close's max_ulp_difference = -3 was
 * converted to uint64_t when the check ran (UBSan); NaN tolerances and
 * float ULP counts the same.  The verifier now refuses them, located. */
static void test_check_attr_findings(void **state) {
  (void)state;
  static const struct { const char *file, *want; } cases[] = {
      {"fuzz_program-check-close-negative-ulp",
       "chk.mlir:4:3: check.expect_close: max_ulp_difference must be an "
       "integer in [0, 9223372036854775807], got -3"},
      {"fuzz_program-check-close-huge-ulp",
       "chk.mlir:4:3: check.expect_close: max_ulp_difference must be an "
       "integer in [0, 9223372036854775807], got 1e+300"},
      {"fuzz_program-check-almost-eq-nan-tolerance",
       "chk.mlir:4:3: check.expect_almost_eq: tolerance must be a finite "
       "number >= 0, got nan"},
  };
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "chk.mlir";
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t len;
    char path[256];
    snprintf(path, sizeof path, REGRESSIONS "%s", cases[i].file);
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    tu_parse_fails(text, &o, XRT_INVALID_ARGUMENT, cases[i].want, NULL);
    assert_string_equal(tu_msg, cases[i].want);
    free(text);
  }
}

/* Regression input name, read as artifact file, must be refused with
 * INVALID_ARGUMENT and exactly the message want. */
static void expect_bytecode_refused(const char *name, const char *file,
                                    const char *want) {
  char path[256];
  snprintf(path, sizeof path, "%s%s", REGRESSIONS, name);
  size_t len;
  char *bc = tu_read_file(path, &len);
  assert_non_null(bc);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = file;
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(bc, len, &o, &p), XRT_INVALID_ARGUMENT);
  assert_null(p);
  tu_save_error();
  assert_string_equal(tu_msg, want);
  free(bc);
}

/* fuzz_bytecode (and fuzz_program): a bytecode producer string shorter
 * than "StableHLO_v" was read past its end. */
static void test_bytecode_short_producer(void **state) {
  (void)state;
  expect_bytecode_refused("fuzz_bytecode-short-producer", "p.mlir.bc",
                          "p.mlir.bc: bytecode offset 5: not a StableHLO"
                          " portable artifact (producer '')");
}

/* fuzz_bytecode: a quantized type whose storage claims 64 bits shifted a
 * signed 1 by 63 while its range was worked out (UBSan); the file is then
 * refused further on, where its data ends early. */
static void test_bytecode_quant_storage_64_bits(void **state) {
  (void)state;
  expect_bytecode_refused("fuzz_bytecode-quant-storage-64-bits", "q.mlir.bc",
                          "q.mlir.bc: bytecode offset 6703: count 10 "
                          "exceeds the data left (1 bytes)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast_without_operand),
      cmocka_unit_test(test_broadcast_shapes),
      cmocka_unit_test(test_dot_without_operands),
      cmocka_unit_test(test_dot_and_dimension_size_rules),
      cmocka_unit_test_setup_teardown(test_dot_runs, tu_setup_client,
                                      tu_teardown_client),
      cmocka_unit_test_setup_teardown(test_generic_arity_sweep,
                                      tu_setup_client, tu_teardown_client),
      cmocka_unit_test_setup_teardown(test_broadcast_runs, tu_setup_client,
                                      tu_teardown_client),
      cmocka_unit_test_setup_teardown(test_npy_findings, tu_setup_client,
                                      tu_teardown_client),
      cmocka_unit_test_setup_teardown(test_empty_shape_overflow,
                                      tu_setup_client, tu_teardown_client),
      cmocka_unit_test(test_plugin_without_free_functions),
      cmocka_unit_test(test_plugin_unterminated_message),
      cmocka_unit_test(test_cache_file_opcode_changed),
      cmocka_unit_test(test_check_attr_findings),
      cmocka_unit_test(test_bytecode_short_producer),
      cmocka_unit_test(test_bytecode_quant_storage_64_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
