/*
 * test_sim_serialize.c - the simulator's serialized executables
 * (src/sim/serialize.c) through its plugin table (xrt_sim_plugin_api):
 * argument checks of executable_serialize / executable_deserialize, the
 * core's record of the entry (an older core's struct, missing output
 * shapes), modules whose features the writer and the reader handle
 * specially (tuples, quantized types, tokens, iota, repeated strings),
 * and bytes that are well formed but say something the planner must not
 * take: each is refused with XRT_INVALID_ARGUMENT and the validator's
 * reason ("bad transpose result", "bad iota_dimension", ...).
 *
 * Damaged bytes are made by editing one attribute of the bytes a program
 * serializes to, found by its name (written once, the first time it
 * appears); the hash is not resealed: the core says it checked one
 * (bytes_verified), so that the validator is what refuses them.  Issue
 * #25 (coverage of src/sim).
 */
#include "test_plugin_abi.h"

static xrt_status nop_host(void *user, xrt_host_call *call) {
  (void)user, (void)call;
  return XRT_OK;
}

/* One program compiled by the simulator's table, and its bytes. */
typedef struct ser {
  xrt_program *prog;
  const xrt_plugin_api *api;
  void *pc, *exe;
  unsigned char *bytes; /* a malloc'd copy, one spare byte */
  size_t n;
  xrt_plugin_compile_args d; /* what deserialize gets */
  xrt_shape ins[8], outs[8];
  xrt_host_binding hosts[4];
  int32_t device;
  xrt_plugin_error err;
} ser;

static void ser_open(ser *s, const char *text) {
  memset(s, 0, sizeof *s);
  int32_t entry;
  const xrt_ir_module *m = tu_parse_main(text, "parse", &s->prog, &entry);
  s->api = xrt_sim_plugin_api();
  s->pc = tu_sim_plugin_client(1 << 24);
  for (int i = 0; i < 4; i++) s->hosts[i].fn = nop_host;
  xrt_plugin_compile_args a = tu_plugin_compile_args(m, entry, &s->device);
  a.host_bindings = s->hosts;
  if (s->api->compile(s->pc, &a, &s->exe, &s->err) != XRT_OK)
    fail_msg("compile: %s", s->err.message);
  void *b = NULL;
  assert_int_equal(s->api->executable_serialize(s->exe, &b, &s->n, &s->err),
                   XRT_OK);
  s->bytes = malloc(s->n + 1);
  assert_non_null(s->bytes);
  memcpy(s->bytes, b, s->n);
  s->api->serialized_free(b);
  s->d = a;
  s->d.module = NULL;
  s->d.entry = -1;
  const xrt_ir_func *f = &m->funcs[entry];
  assert_true(f->body.num_args <= 8 && f->num_results <= 8);
  for (int32_t i = 0; i < f->body.num_args; i++)
    s->ins[i] = f->value_types[f->body.args[i]].shape;
  for (int32_t i = 0; i < f->num_results; i++)
    s->outs[i] = f->result_types[i].shape;
  s->d.num_host_bindings = m->num_custom_calls;
  s->d.num_inputs = f->body.num_args;
  s->d.num_outputs = f->num_results;
  s->d.input_shapes = s->ins;
  s->d.output_shapes = s->outs;
  s->d.bytes_verified = 1;
}

static void ser_close(ser *s) {
  free(s->bytes);
  s->api->executable_destroy(s->exe);
  s->api->client_destroy(s->pc);
  xrt_program_release(s->prog);
}

/* Loads b[0, n) with the args of s; on success destroys what it loaded. */
static xrt_status ser_load(ser *s, const xrt_plugin_compile_args *a,
                           const void *b, size_t n) {
  void *back = NULL;
  xrt_status st = s->api->executable_deserialize(s->pc, a, b, n, &back,
                                                 &s->err);
  if (st == XRT_OK) {
    assert_non_null(back);
    s->api->executable_destroy(back);
  } else {
    assert_null(back);
  }
  return st;
}

/* The offset just past the first occurrence of attribute name in the
 * bytes (a u32 length + 1, then its bytes); fails when absent. */
static size_t ser_find(const ser *s, const char *name) {
  size_t k = strlen(name);
  uint32_t len = (uint32_t)k + 1;
  for (size_t i = 0; i + 4 + k <= s->n; i++)
    if (memcmp(s->bytes + i, &len, 4) == 0 &&
        memcmp(s->bytes + i + 4, name, k) == 0)
      return i + 4 + k;
  fail_msg("attribute %s not in the bytes", name);
  return 0;
}

/* After an attribute's name: u8 kind, i64 i, f64 f, i64 n, then (ints)
 * n i64. */
#define SER_AT_I 1
#define SER_AT_INTS 25

static void ser_put_i64(ser *s, size_t at, int64_t v) {
  assert_true(at + 8 <= s->n);
  memcpy(s->bytes + at, &v, 8);
}

static int64_t ser_get_i64(const ser *s, size_t at) {
  int64_t v;
  memcpy(&v, s->bytes + at, 8);
  return v;
}

/* Edits the i64 at offset off after attribute name from want to v, loads
 * the bytes, and expects XRT_INVALID_ARGUMENT naming why. */
static void ser_refuse_edit(const char *text, const char *name, size_t off,
                            int64_t want, int64_t v, const char *why) {
  ser s;
  ser_open(&s, text);
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_OK);
  size_t at = ser_find(&s, name) + off;
  assert_int_equal(ser_get_i64(&s, at), want);
  ser_put_i64(&s, at, v);
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, why);
  ser_close(&s);
}

/* Replaces the last byte of the first string `from` in the bytes of text
 * (a u32 length + 1 and the bytes) with c, and expects the load to be
 * refused naming why. */
static void ser_refuse_rename(const char *text, const char *from, char c,
                              const char *why) {
  ser s;
  ser_open(&s, text);
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_OK);
  size_t at = ser_find(&s, from);
  s.bytes[at - 1] = (unsigned char)c;
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, why);
  ser_close(&s);
}

static const char *kAdd =
    "func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "  %0 = stablehlo.add %a, %a : tensor<2x3xf32>\n"
    "  return %0 : tensor<2x3xf32>\n"
    "}\n";

/* ---- arguments ---- */

static void test_bad_arguments(void **state) {
  (void)state;
  ser s;
  ser_open(&s, kAdd);
  void *b = NULL;
  size_t n = 0;
  assert_int_equal(s.api->executable_serialize(NULL, &b, &n, &s.err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "bad serialize arguments");
  assert_int_equal(s.api->executable_serialize(s.exe, NULL, &n, &s.err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(s.api->executable_serialize(s.exe, &b, NULL, &s.err),
                   XRT_INVALID_ARGUMENT);
  void *back = NULL;
  assert_int_equal(s.api->executable_deserialize(NULL, &s.d, s.bytes, s.n,
                                                 &back, &s.err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "bad deserialize arguments");
  assert_int_equal(s.api->executable_deserialize(s.pc, NULL, s.bytes, s.n,
                                                 &back, &s.err),
                   XRT_INVALID_ARGUMENT);
  xrt_plugin_compile_args tiny = s.d;
  tiny.struct_size = 4;
  assert_int_equal(s.api->executable_deserialize(s.pc, &tiny, s.bytes, s.n,
                                                 &back, &s.err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "bad deserialize arguments");
  assert_int_equal(s.api->executable_deserialize(s.pc, &s.d, s.bytes, s.n,
                                                 NULL, &s.err),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(s.api->executable_deserialize(s.pc, &s.d, NULL, 5, &back,
                                                 &s.err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "bad deserialize arguments");
  /* no bytes at all: not a serialized executable */
  assert_int_equal(ser_load(&s, &s.d, NULL, 0), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "serialized executable");
  ser_close(&s);
}

/* The core's record of the entry: a core whose struct ends before it is
 * refused (the simulator needs the shapes to trust the bytes); NULL shapes
 * with a count are refused, naming the side. */
static void test_signature_record(void **state) {
  (void)state;
  ser s;
  ser_open(&s, kAdd);
  xrt_plugin_compile_args a = s.d;
  a.struct_size = offsetof(xrt_plugin_compile_args, num_host_bindings);
  assert_int_equal(ser_load(&s, &a, s.bytes, s.n), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "bad deserialize arguments");
  a = s.d;
  a.output_shapes = NULL;
  assert_int_equal(ser_load(&s, &a, s.bytes, s.n), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "an entry output shape");
  a = s.d;
  a.input_shapes = NULL;
  assert_int_equal(ser_load(&s, &a, s.bytes, s.n), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "an entry input shape");
  xrt_shape other = s.outs[0];
  other.dims[1] = 4;
  a = s.d;
  a.output_shapes = &other;
  assert_int_equal(ser_load(&s, &a, s.bytes, s.n), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "an entry output shape");
  ser_close(&s);
}

/* ---- modules the reader loads, or refuses as a whole ---- */

typedef struct ser_case {
  const char *text;
  const char *why; /* NULL: loads and serializes back to the same bytes */
} ser_case;

static void test_round_trips(void **state) {
  (void)state;
  static const ser_case cases[] = {
      /* iota (its own validator); a tuple built and taken apart inside
       * the function (written in full; tuple ops are not loaded) */
      {"func.func @main() -> tensor<2x3xi32> {\n"
       "  %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>\n"
       "  return %0 : tensor<2x3xi32>\n"
       "}\n",
       NULL},
      {"func.func @main(%a: tensor<3xf32>, %b: tensor<3xi32>) -> tensor<3xf32> {\n"
       "  %t = stablehlo.tuple %a, %b : tuple<tensor<3xf32>, tensor<3xi32>>\n"
       "  %x = stablehlo.get_tuple_element %t[0] : (tuple<tensor<3xf32>, tensor<3xi32>>) -> tensor<3xf32>\n"
       "  %y = stablehlo.add %x, %a : tensor<3xf32>\n"
       "  return %y : tensor<3xf32>\n"
       "}\n",
       "op not loadable from serialized bytes"},
      /* abs of complex: real results */
      {"func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xf32> {\n"
       "  %0 = stablehlo.abs %a : (tensor<2xcomplex<f32>>) -> tensor<2xf32>\n"
       "  return %0 : tensor<2xf32>\n"
       "}\n",
       NULL},
      /* a quantized value: written in full, refused when read (the
       * function's results first, then a value defined inside) */
      {"func.func @main(%a: tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4x!quant.uniform<i8:f32, 0.5:3>> {\n"
       "  return %a : tensor<4x!quant.uniform<i8:f32, 0.5:3>>\n"
       "}\n",
       "quantized types are not loaded from bytes"},
      {"func.func @main(%a: tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xi8> {\n"
       "  %0 = stablehlo.bitcast_convert %a : (tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xi8>\n"
       "  return %0 : tensor<4xi8>\n"
       "}\n",
       "quantized types are not loaded from bytes"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    ser s;
    ser_open(&s, cases[i].text);
    xrt_status st = ser_load(&s, &s.d, s.bytes, s.n);
    if (!cases[i].why) {
      if (st != XRT_OK) fail_msg("case %zu: %s", i, s.err.message);
      /* and without the core's word for the hash: the bytes' own hash
       * holds */
      xrt_plugin_compile_args a = s.d;
      a.bytes_verified = 0;
      void *back = NULL, *b2 = NULL;
      size_t n2 = 0;
      assert_int_equal(s.api->executable_deserialize(s.pc, &a, s.bytes, s.n,
                                                     &back, &s.err),
                       XRT_OK);
      assert_int_equal(s.api->executable_serialize(back, &b2, &n2, &s.err),
                       XRT_OK);
      assert_int_equal(n2, s.n);
      assert_memory_equal(b2, s.bytes, s.n);
      s.api->serialized_free(b2);
      s.api->executable_destroy(back);
    } else {
      if (st != XRT_INVALID_ARGUMENT)
        fail_msg("case %zu: status %d, want refused", i, (int)st);
      TU_ASSERT_CONTAINS(s.err.message, cases[i].why);
    }
    ser_close(&s);
  }
}

/* ---- well-formed bytes the validator refuses ---- */

static void test_bad_transpose(void **state) {
  (void)state;
  const char *t =
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
      "  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
      "  return %0 : tensor<3x2xf32>\n"
      "}\n";
  /* [0, 1]: a permutation, but the result's dims are not the input's
   * permuted */
  ser s;
  ser_open(&s, t);
  size_t at = ser_find(&s, "permutation") + SER_AT_INTS;
  assert_int_equal(ser_get_i64(&s, at), 1);
  assert_int_equal(ser_get_i64(&s, at + 8), 0);
  ser_put_i64(&s, at, 0);
  ser_put_i64(&s, at + 8, 1);
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "bad transpose result");
  ser_close(&s);
}

static const char *kTranspose =
    "func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
    "  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
    "  return %0 : tensor<3x2xf32>\n"
    "}\n";

/* A permutation that repeats or leaves the rank, or is missing. */
static void test_bad_permutation(void **state) {
  (void)state;
  ser_refuse_edit(kTranspose, "permutation", SER_AT_INTS + 8, 0, 1,
                  "dimension repeated");
  ser_refuse_edit(kTranspose, "permutation", SER_AT_INTS, 1, 2,
                  "dimension out of range");
  ser_refuse_rename(kTranspose, "permutation", 'X',
                    "missing integer list attribute");
}

/* Attributes under other names, and an unknown comparison direction. */
static void test_bad_names(void **state) {
  (void)state;
  ser_refuse_rename(
      "func.func @main(%a: tensor<3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  return %0 : tensor<2x3xf32>\n"
      "}\n",
      "broadcast_dimensions", 'X', "missing integer list attribute");
  ser_refuse_rename(
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<2xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n",
      "dimensions", 'X', "missing integer list attribute");
  ser_refuse_rename(
      "func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {\n"
      "  %0 = stablehlo.compare LT, %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>\n"
      "  return %0 : tensor<3xi1>\n"
      "}\n",
      "LT", 'X', "bad comparison_direction");
}

static void test_bad_iota(void **state) {
  (void)state;
  ser_refuse_edit("func.func @main() -> tensor<2x3xi32> {\n"
                  "  %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>\n"
                  "  return %0 : tensor<2x3xi32>\n"
                  "}\n",
                  "iota_dimension", SER_AT_I, 1, 2, "bad iota_dimension");
  ser_refuse_edit("func.func @main() -> tensor<2x3xi32> {\n"
                  "  %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>\n"
                  "  return %0 : tensor<2x3xi32>\n"
                  "}\n",
                  "iota_dimension", SER_AT_I, 1, -1, "bad iota_dimension");
}

static void test_bad_broadcast(void **state) {
  (void)state;
  /* tensor<3> along dim 0 of 2x3: 3 != 2 */
  ser_refuse_edit(
      "func.func @main(%a: tensor<3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>\n"
      "  return %0 : tensor<2x3xf32>\n"
      "}\n",
      "broadcast_dimensions", SER_AT_INTS, 1, 0, "bad broadcast_in_dim sizes");
}

static void test_bad_dot(void **state) {
  (void)state;
  /* contracting lhs dim 0 (2) with rhs dim 0 (3) */
  ser_refuse_edit(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n"
      "  return %0 : tensor<2x4xf32>\n"
      "}\n",
      "lhs_contracting_dimensions", SER_AT_INTS, 1, 0,
      "dot_general dimension sizes differ");
}

static void test_bad_reduce(void **state) {
  (void)state;
  /* reducing dim 0 of 2x3 leaves 3, not the 2 of the result */
  ser_refuse_edit(
      "func.func @main(%a: tensor<2x3xf32>) -> tensor<2xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n",
      "dimensions", SER_AT_INTS, 1, 0, "bad reduce result");
}

/* slice, concatenate, dynamic_slice and dynamic_update_slice load (their
 * own validators: an LSTM step or a KV cache has them all) */
static const char *kMoves =
    "func.func @main(%a: tensor<4x6xf32>, %b: tensor<2x6xf32>, %i: tensor<i32>) -> (tensor<2x3xf32>, tensor<6x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>) {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %0 = stablehlo.slice %a [1:3, 0:6:2] : (tensor<4x6xf32>) -> tensor<2x3xf32>\n"
    "  %1 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<4x6xf32>, tensor<2x6xf32>) -> tensor<6x6xf32>\n"
    "  %2 = stablehlo.dynamic_slice %a, %i, %z, sizes = [2, 6] : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x6xf32>\n"
    "  %3 = stablehlo.dynamic_update_slice %a, %b, %i, %z : (tensor<4x6xf32>, tensor<2x6xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>\n"
    "  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<6x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>\n"
    "}\n";

static void test_moves_load(void **state) {
  (void)state;
  ser s;
  ser_open(&s, kMoves);
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_OK);
  ser_close(&s);
}

/* Each bound of a slice out of its range, a stride of 0, a result of the
 * wrong size, a missing list.  (A list of another length changes the
 * layout of the bytes: the reader refuses those before any validator.) */
static void test_bad_slice(void **state) {
  (void)state;
  /* start 1 > limit 0 in dim 0 after the edit; limit 7 > 4 */
  ser_refuse_edit(kMoves, "start_indices", SER_AT_INTS, 1, 4,
                  "bad slice bounds");
  ser_refuse_edit(kMoves, "limit_indices", SER_AT_INTS, 3, 7,
                  "bad slice bounds");
  ser_refuse_edit(kMoves, "start_indices", SER_AT_INTS, 1, -1,
                  "bad slice bounds");
  ser_refuse_edit(kMoves, "strides", SER_AT_INTS + 8, 2, 0,
                  "bad slice bounds");
  /* [1:3:1, 0:6:2] is still in range, but 3 columns became 6 */
  ser_refuse_edit(kMoves, "strides", SER_AT_INTS + 8, 2, 1,
                  "bad slice bounds");
  ser_refuse_rename(kMoves, "limit_indices", 'X',
                    "missing integer list attribute");
}

static void test_bad_concatenate(void **state) {
  (void)state;
  ser_refuse_edit(kMoves, "dimension", SER_AT_I, 0, 2, "bad concatenate");
  ser_refuse_edit(kMoves, "dimension", SER_AT_I, 0, -1, "bad concatenate");
  /* along dim 1: the operands' rows differ (4, 2) */
  ser_refuse_edit(kMoves, "dimension", SER_AT_I, 0, 1,
                  "bad concatenate operand");
}

static void test_bad_dynamic_slice(void **state) {
  (void)state;
  /* sizes [5, 6] > [4, 6]; [2, 5] does not match the 2x6 result */
  ser_refuse_edit(kMoves, "slice_sizes", SER_AT_INTS, 2, 5,
                  "bad dynamic_slice sizes");
  ser_refuse_edit(kMoves, "slice_sizes", SER_AT_INTS + 8, 6, 5,
                  "bad dynamic_slice sizes");
}

static void test_custom_call_name(void **state) {
  (void)state;
  ser s;
  ser_open(&s, "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
               "  %0 = stablehlo.custom_call @test.scale2(%a) : (tensor<3xf32>) -> tensor<3xf32>\n"
               "  return %0 : tensor<3xf32>\n"
               "}\n");
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_OK);
  size_t at = ser_find(&s, "call_target_name");
  s.bytes[at - 1] = 'X'; /* "call_target_namX" */
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(s.err.message, "custom_call without call_target_name");
  ser_close(&s);
}

/* ---- damaged bytes of every kind ---- */

/* A program whose plan holds several validated kinds of step. */
static const char *kMany =
    "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %i: tensor<i32>) -> (tensor<2x2xf32>, tensor<5x3xf32>) {\n"
    "  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
    "  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n"
    "  %s = stablehlo.slice %d [0:2, 1:3] : (tensor<2x4xf32>) -> tensor<2x2xf32>\n"
    "  %c = stablehlo.concatenate %t, %s, dim = 0 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<5x2xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %r = stablehlo.reduce(%c init: %z) applies stablehlo.add across dimensions = [1] : (tensor<5x2xf32>, tensor<f32>) -> tensor<5xf32>\n"
    "  %io = stablehlo.iota dim = 0 : tensor<5xf32>\n"
    "  %y = stablehlo.add %r, %io : tensor<5xf32>\n"
    "  %bc = stablehlo.broadcast_in_dim %y, dims = [0] : (tensor<5xf32>) -> tensor<5x3xf32>\n"
    "  %ds = stablehlo.dynamic_slice %bc, %i, %i, sizes = [2, 2] : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>\n"
    "  return %ds, %bc : tensor<2x2xf32>, tensor<5x3xf32>\n"
    "}\n";

/* Loads the bytes with byte `at` replaced by v: either they load, or they
 * are refused with XRT_INVALID_ARGUMENT and a reason; nothing else (ASan
 * and valgrind watch the reads). */
static void ser_load_changed(ser *s, size_t at, unsigned char v) {
  unsigned char was = s->bytes[at];
  s->bytes[at] = v;
  s->err.message[0] = 0;
  xrt_status st = ser_load(s, &s->d, s->bytes, s->n);
  if (st != XRT_OK && st != XRT_INVALID_ARGUMENT)
    fail_msg("byte %zu = %u: status %d (%s)", at, v, (int)st, s->err.message);
  if (st != XRT_OK && !s->err.message[0])
    fail_msg("byte %zu = %u: refused without a reason", at, v);
  s->bytes[at] = was;
}

/* A program with control flow, a call, a host call and steps of the
 * other validated kinds. */
static const char *kCtrl =
    "func.func @main(%a: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<2x2xi32>) {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %w:2 = stablehlo.while(%i = %c0, %x = %a) : tensor<i32>, tensor<4xf32>\n"
    "   cond {\n"
    "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %j = stablehlo.add %i, %one : tensor<i32>\n"
    "    %y = func.call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "    stablehlo.return %j, %y : tensor<i32>, tensor<4xf32>\n"
    "  }\n"
    "  %lo = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %hi = stablehlo.constant dense<6.0> : tensor<f32>\n"
    "  %cl = stablehlo.clamp %lo, %w#1, %hi : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>\n"
    "  %pr = stablehlo.compare GT, %cl, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
    "  %se = stablehlo.select %pr, %cl, %a : tensor<4xi1>, tensor<4xf32>\n"
    "  %cv = stablehlo.convert %se : (tensor<4xf32>) -> tensor<4xi32>\n"
    "  %rs = stablehlo.reshape %cv : (tensor<4xi32>) -> tensor<2x2xi32>\n"
    "  %h = stablehlo.custom_call @test.scale2(%se) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %h, %rs : tensor<4xf32>, tensor<2x2xi32>\n"
    "}\n"
    "func.func private @twice(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %y = stablehlo.add %x, %x : tensor<4xf32>\n"
    "  return %y : tensor<4xf32>\n"
    "}\n";

/* Every byte of a program's serialized plan changed to values that break
 * lengths, counts, kinds and indices (0, 1, ff, and the value with its
 * low or high bit flipped); and every proper prefix of the bytes, which
 * must be refused.  The core's hash check is off (bytes_verified), so the
 * reader and the validators are all that stands between the bytes and the
 * planner. */
static void ser_damage_every_byte(const char *text) {
  ser s;
  ser_open(&s, text);
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_OK);
  for (size_t at = 0; at < s.n; at++) {
    unsigned char b = s.bytes[at];
    const unsigned char vals[] = {0x00, 0x01, 0xff, (unsigned char)(b ^ 1u),
                                  (unsigned char)(b ^ 0x80u)};
    for (size_t k = 0; k < TU_COUNT(vals); k++)
      if (vals[k] != b) ser_load_changed(&s, at, vals[k]);
  }
  for (size_t n = 0; n < s.n; n++) {
    s.err.message[0] = 0;
    if (ser_load(&s, &s.d, s.bytes, n) != XRT_INVALID_ARGUMENT)
      fail_msg("the first %zu of %zu bytes were not refused", n, s.n);
    assert_true(s.err.message[0] != 0);
  }
  /* the bytes themselves still load */
  assert_int_equal(ser_load(&s, &s.d, s.bytes, s.n), XRT_OK);
  ser_close(&s);
}

static void test_every_byte_changed(void **state) {
  (void)state;
  ser_damage_every_byte(kMany);
  ser_damage_every_byte(kCtrl);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_signature_record),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_bad_transpose),
        cmocka_unit_test(test_bad_permutation),
        cmocka_unit_test(test_bad_names), cmocka_unit_test(test_bad_iota),
        cmocka_unit_test(test_bad_broadcast), cmocka_unit_test(test_bad_dot),
        cmocka_unit_test(test_bad_reduce),
        cmocka_unit_test(test_moves_load),
        cmocka_unit_test(test_bad_slice),
        cmocka_unit_test(test_bad_concatenate),
        cmocka_unit_test(test_bad_dynamic_slice),
        cmocka_unit_test(test_custom_call_name),
        cmocka_unit_test(test_every_byte_changed))
