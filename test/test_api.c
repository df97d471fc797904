/* test_api.c - status codes, dtype and shape tables, clients and devices,
 * and API misuse (NULLs, stale handles, foreign handles, limits). */
#include "test_util.h"

/* ---- status codes ---- */

static void test_strerror_distinct(void **state) {
  (void)state;
  for (int a = XRT_OK; a <= XRT_CHECK_FAILED; a++) {
    const char *na = xrt_strerror((xrt_status)a);
    assert_non_null(na);
    assert_true(strlen(na) > 0);
    for (int b = XRT_OK; b < a; b++)
      assert_string_not_equal(na, xrt_strerror((xrt_status)b));
  }
  assert_string_equal(xrt_strerror(XRT_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  assert_non_null(xrt_strerror((xrt_status)999)); /* never NULL */
  assert_non_null(xrt_strerror((xrt_status)-1));
}

static void test_last_error(void **state) {
  (void)state;
  xrt_client *c = (xrt_client *)0x1;
  assert_int_equal(xrt_client_create(NULL, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_last_status(), XRT_INVALID_ARGUMENT);
  assert_true(strlen(xrt_last_error()) > 0);
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 0;
  assert_int_equal(xrt_client_create(&o, &c), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_last_status(), XRT_INVALID_ARGUMENT);
  assert_true(strlen(xrt_last_error()) > 0);
}

/* ---- dtypes ---- */

typedef struct dt_row {
  xrt_dtype t;
  const char *name;
  size_t size;
  int bits;
  char cls; /* f float, c complex, s signed, u unsigned, p pred */
} dt_row;

static const dt_row dt_table[] = {
    {XRT_PRED, "i1", 1, 1, 'p'},
    {XRT_S8, "i8", 1, 8, 's'},
    {XRT_S16, "i16", 2, 16, 's'},
    {XRT_S32, "i32", 4, 32, 's'},
    {XRT_S64, "i64", 8, 64, 's'},
    {XRT_U8, "ui8", 1, 8, 'u'},
    {XRT_U16, "ui16", 2, 16, 'u'},
    {XRT_U32, "ui32", 4, 32, 'u'},
    {XRT_U64, "ui64", 8, 64, 'u'},
    {XRT_F16, "f16", 2, 16, 'f'},
    {XRT_BF16, "bf16", 2, 16, 'f'},
    {XRT_F32, "f32", 4, 32, 'f'},
    {XRT_F64, "f64", 8, 64, 'f'},
    {XRT_C64, "complex<f32>", 8, 64, 'c'},
    {XRT_C128, "complex<f64>", 16, 128, 'c'},
    {XRT_S2, "i2", 1, 2, 's'},
    {XRT_S4, "i4", 1, 4, 's'},
    {XRT_U2, "ui2", 1, 2, 'u'},
    {XRT_U4, "ui4", 1, 4, 'u'},
    {XRT_F8E4M3FN, "f8E4M3FN", 1, 8, 'f'},
    {XRT_F8E5M2, "f8E5M2", 1, 8, 'f'},
    {XRT_F8E4M3FNUZ, "f8E4M3FNUZ", 1, 8, 'f'},
    {XRT_F8E5M2FNUZ, "f8E5M2FNUZ", 1, 8, 'f'},
    {XRT_F8E4M3B11FNUZ, "f8E4M3B11FNUZ", 1, 8, 'f'},
    {XRT_F8E3M4, "f8E3M4", 1, 8, 'f'},
    {XRT_F8E4M3, "f8E4M3", 1, 8, 'f'},
    {XRT_F8E8M0FNU, "f8E8M0FNU", 1, 8, 'f'},
    {XRT_F6E2M3FN, "f6E2M3FN", 1, 6, 'f'},
    {XRT_F6E3M2FN, "f6E3M2FN", 1, 6, 'f'},
    {XRT_F4E2M1FN, "f4E2M1FN", 1, 4, 'f'},
};

static void test_dtype_table(void **state) {
  (void)state;
  assert_int_equal(TU_COUNT(dt_table), XRT_DTYPE_COUNT - 1);
  for (size_t i = 0; i < TU_COUNT(dt_table); i++) {
    const dt_row *r = &dt_table[i];
    assert_string_equal(xrt_dtype_name(r->t), r->name);
    assert_int_equal(xrt_dtype_size(r->t), r->size);
    assert_int_equal(xrt_dtype_bits(r->t), r->bits);
    assert_int_equal(xrt_dtype_from_name(r->name, strlen(r->name)), r->t);
    assert_int_equal(xrt_dtype_is_float(r->t), r->cls == 'f');
    assert_int_equal(xrt_dtype_is_complex(r->t), r->cls == 'c');
    assert_int_equal(xrt_dtype_is_signed_int(r->t), r->cls == 's');
    assert_int_equal(xrt_dtype_is_unsigned_int(r->t), r->cls == 'u');
  }
}

static void test_dtype_invalid(void **state) {
  (void)state;
  assert_int_equal(xrt_dtype_size(XRT_DTYPE_INVALID), 0);
  assert_int_equal(xrt_dtype_size((xrt_dtype)99), 0);
  assert_int_equal(xrt_dtype_size(XRT_DTYPE_COUNT), 0);
  assert_string_equal(xrt_dtype_name(XRT_DTYPE_INVALID), "invalid");
  assert_string_equal(xrt_dtype_name((xrt_dtype)99), "invalid");
  assert_string_equal(xrt_dtype_name((xrt_dtype)-3), "invalid");
  assert_int_equal(xrt_dtype_from_name("bogus", 5), XRT_DTYPE_INVALID);
  assert_int_equal(xrt_dtype_from_name("", 0), XRT_DTYPE_INVALID);
  assert_int_equal(xrt_dtype_from_name(NULL, 3), XRT_DTYPE_INVALID);
  /* len bounds the name: "f32" followed by junk, and a prefix of "f32". */
  assert_int_equal(xrt_dtype_from_name("f32>", 3), XRT_F32);
  assert_int_equal(xrt_dtype_from_name("f32", 2), XRT_DTYPE_INVALID);
  assert_int_equal(xrt_dtype_from_name("i1", 2), XRT_PRED);
  assert_false(xrt_dtype_is_float(XRT_DTYPE_INVALID));
  assert_false(xrt_dtype_is_unsigned_int(XRT_PRED));
}

/* ---- shapes ---- */

static void test_shape_numel_bytes(void **state) {
  (void)state;
  xrt_shape s = TU_SHAPE(XRT_F32, 2, 3);
  assert_int_equal(xrt_shape_numel(&s), 6);
  assert_int_equal(xrt_shape_bytes(&s), 24);
  s = TU_SCALAR(XRT_F64);
  assert_int_equal(xrt_shape_numel(&s), 1);
  assert_int_equal(xrt_shape_bytes(&s), 8);
  s = TU_SHAPE(XRT_C128, 3, 0, 4);
  assert_int_equal(xrt_shape_numel(&s), 0);
  assert_int_equal(xrt_shape_bytes(&s), 0);
  s = TU_SHAPE(XRT_S4, 5, 7);
  assert_int_equal(xrt_shape_bytes(&s), 35); /* one byte per i4 */
  s = TU_SHAPE(XRT_C64, 2, 2, 2, 2, 2);
  assert_int_equal(xrt_shape_numel(&s), 32);
  assert_int_equal(xrt_shape_bytes(&s), 256);
}

static void test_shape_format(void **state) {
  (void)state;
  char buf[64];
  xrt_shape s = TU_SHAPE(XRT_F32, 2, 3);
  assert_int_equal(xrt_shape_format(&s, buf, sizeof buf), 15);
  assert_string_equal(buf, "tensor<2x3xf32>");
  s = TU_SCALAR(XRT_F32);
  assert_int_equal(xrt_shape_format(&s, buf, sizeof buf), 11);
  assert_string_equal(buf, "tensor<f32>");
  s = TU_SHAPE(XRT_C64, 4);
  xrt_shape_format(&s, buf, sizeof buf);
  assert_string_equal(buf, "tensor<4xcomplex<f32>>");
  s = TU_SHAPE(XRT_PRED, 0, 5);
  xrt_shape_format(&s, buf, sizeof buf);
  assert_string_equal(buf, "tensor<0x5xi1>");
  s = TU_SHAPE(XRT_U4, 10);
  xrt_shape_format(&s, buf, sizeof buf);
  assert_string_equal(buf, "tensor<10xui4>");
}

static void test_shape_format_truncates(void **state) {
  (void)state;
  char buf[8];
  memset(buf, 'Z', sizeof buf);
  xrt_shape s = TU_SHAPE(XRT_F32, 2, 3);
  assert_int_equal(xrt_shape_format(&s, buf, 5), 15);
  assert_string_equal(buf, "tens");
  assert_int_equal(buf[5], 'Z'); /* nothing written past cap */
  assert_int_equal(xrt_shape_format(&s, NULL, 0), 15);
}

/* ---- clients and devices ---- */

static void test_client_options_defaults(void **state) {
  (void)state;
  xrt_client_options o;
  memset(&o, 0x5a, sizeof o);
  xrt_client_options_init(&o);
  assert_int_equal(o.num_devices, 1);
  assert_true(o.device_memory_bytes == 4ull << 30);
  assert_true(o.plugin == NULL || strcmp(o.plugin, "sim") == 0);
  assert_non_null(o.allocator.alloc);
  assert_non_null(o.allocator.free);
}

static void test_client_default(void **state) {
  (void)state;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(NULL, &c), XRT_OK);
  assert_non_null(c);
  assert_string_equal(xrt_client_platform(c), "sim");
  assert_int_equal(xrt_client_device_count(c), 1);
  xrt_device *d = xrt_client_device(c, 0);
  assert_non_null(d);
  assert_int_equal(xrt_device_id(d), 0);
  assert_string_equal(xrt_device_kind(d), "sim");
  xrt_client_release(c);
}

static void check_device_attrs(xrt_device *d, uint64_t mem) {
  int n = xrt_device_attribute_count(d);
  assert_true(n >= 1);
  for (int i = 0; i < n; i++) {
    xrt_attribute a;
    assert_int_equal(xrt_device_attribute_get(d, i, &a), XRT_OK);
    assert_non_null(a.name);
    assert_true(strlen(a.name) > 0);
  }
  xrt_attribute a;
  assert_int_equal(xrt_device_attribute_find(d, "memory_bytes", &a), XRT_OK);
  assert_string_equal(a.name, "memory_bytes");
  assert_int_equal(a.type, XRT_ATTRIBUTE_INT);
  assert_true((uint64_t)a.int_value == mem);
  assert_int_equal(xrt_device_attribute_find(d, "no_such_attr", &a),
                   XRT_NOT_FOUND);
  assert_int_not_equal(xrt_device_attribute_get(d, n, &a), XRT_OK);
  assert_int_not_equal(xrt_device_attribute_get(d, -1, &a), XRT_OK);
}

static void test_client_four_devices(void **state) {
  (void)state;
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 4;
  o.device_memory_bytes = 64ull << 20;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  assert_int_equal(xrt_client_device_count(c), 4);
  for (int i = 0; i < 4; i++) {
    xrt_device *d = xrt_client_device(c, i);
    assert_non_null(d);
    assert_int_equal(xrt_device_id(d), i);
    assert_string_equal(xrt_device_kind(d), "sim");
    assert_ptr_equal(xrt_client_device(c, i), d); /* stable handle */
    check_device_attrs(d, 64ull << 20);
  }
  assert_null(xrt_client_device(c, 4));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  assert_null(xrt_client_device(c, -1));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  xrt_client_release(c);
}

static void test_client_bad_num_devices(void **state) {
  (void)state;
  const int bad[] = {0, -1, 1025, 1 << 30};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    xrt_client_options o;
    xrt_client_options_init(&o);
    o.num_devices = bad[i];
    xrt_client *c = NULL;
    assert_int_equal(xrt_client_create(&o, &c), XRT_INVALID_ARGUMENT);
    assert_null(c);
  }
}

static void test_client_unknown_plugin(void **state) {
  (void)state;
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.plugin = "no_such_plugin";
  xrt_client *c = NULL;
  assert_int_not_equal(xrt_client_create(&o, &c), XRT_OK);
  assert_null(c);
  TU_ASSERT_CONTAINS(xrt_last_error(), "no_such_plugin");
}

/* A counting allocator: every byte the client takes comes back. */
typedef struct count_alloc {
  long allocs, frees;
} count_alloc;

static void *ca_alloc(void *self, size_t n) {
  ((count_alloc *)self)->allocs++;
  return malloc(n);
}

static void ca_free(void *self, void *p) {
  if (p) ((count_alloc *)self)->frees++;
  free(p);
}

static void test_client_allocator(void **state) {
  (void)state;
  count_alloc ca = {0, 0};
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.allocator.self = &ca;
  o.allocator.alloc = ca_alloc;
  o.allocator.free = ca_free;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  float v[4] = {1, 2, 3, 4};
  xrt_shape s = TU_SHAPE(XRT_F32, 4);
  xrt_buffer *b = NULL;
  assert_int_equal(
      xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, v, &b), XRT_OK);
  xrt_client_release(c); /* also releases b */
  assert_true(ca.allocs > 0);
  assert_int_equal(ca.allocs, ca.frees);
}

/* ---- NULL everywhere ---- */

static void test_null_client_calls(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_attribute a;
  xrt_client_release(NULL);
  (void)xrt_client_platform(NULL);
  assert_int_equal(xrt_client_device_count(NULL), -1);
  assert_null(xrt_client_device(NULL, 0));
  assert_int_equal(xrt_device_id(NULL), -1);
  (void)xrt_device_kind(NULL);
  assert_int_equal(xrt_device_attribute_count(NULL), -1);
  assert_int_equal(xrt_device_attribute_get(NULL, 0, &a), XRT_INVALID_ARGUMENT);
  xrt_device *d = xrt_client_device(c, 0);
  assert_int_equal(xrt_device_attribute_get(d, 0, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_device_attribute_find(NULL, "memory_bytes", &a),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_device_attribute_find(d, NULL, &a), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_device_attribute_find(d, "memory_bytes", NULL),
                   XRT_INVALID_ARGUMENT);
  xrt_client_options_init(NULL);
  xrt_compile_options_init(NULL);
  xrt_execute_options_init(NULL);
}

static void test_null_buffer_calls(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *d = xrt_client_device(c, 0);
  xrt_shape s = TU_SHAPE(XRT_F32, 2), out;
  float v[2] = {1, 2};
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(NULL, d, &s, v, &b), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_from_host(c, NULL, &s, v, &b), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_from_host(c, d, NULL, v, &b), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_from_host(c, d, &s, NULL, &b), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_from_host(c, d, &s, v, NULL), XRT_INVALID_ARGUMENT);
  assert_null(b);
  assert_int_equal(xrt_buffer_to_host(NULL, v, sizeof v), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_copy_to_device(NULL, d, &b), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_shape(NULL, &out), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_bytes(NULL), 0);
  assert_null(xrt_buffer_device(NULL));
  assert_int_equal(xrt_buffer_release(NULL), XRT_OK);
  assert_int_equal(xrt_buffer_from_npy(NULL, d, "x.npy", &b), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_from_npy(c, d, NULL, &b), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_from_npy(c, d, "x.npy", NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_to_npy(NULL, "x.npy"), XRT_INVALID_ARGUMENT);
  /* With a live buffer, NULL in the other slots. */
  assert_int_equal(xrt_buffer_from_host(c, d, &s, v, &b), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(b, NULL, sizeof v), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_shape(b, NULL), XRT_INVALID_ARGUMENT);
  xrt_buffer *b2 = NULL;
  assert_int_equal(xrt_buffer_copy_to_device(b, NULL, &b2), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_copy_to_device(b, d, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_to_npy(b, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_release(b), XRT_OK);
}

static const char *k_neg = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                           "  %0 = stablehlo.negate %a : tensor<2xf32>\n"
                           "  func.return %0 : tensor<2xf32>\n"
                           "}\n";

static xrt_status dummy_host_fn(void *user, xrt_host_call *call) {
  (void)user;
  (void)call;
  return XRT_OK;
}

static void test_null_program_calls(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_program *p = NULL;
  xrt_executable *e = NULL;
  xrt_shape s;
  size_t n = strlen(k_neg);
  assert_int_equal(xrt_program_parse(NULL, 10, NULL, &p), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_program_parse(k_neg, n, NULL, NULL), XRT_INVALID_ARGUMENT);
  xrt_program_release(NULL);
  (void)xrt_program_function_count(NULL);
  (void)xrt_program_function_name(NULL, 0);
  assert_null(xrt_program_module(NULL));
  assert_int_equal(xrt_compile_program(NULL, p, NULL, &e), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_program_parse(k_neg, n, NULL, &p), XRT_OK);
  assert_int_equal(xrt_compile_program(c, NULL, NULL, &e), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_compile_program(c, p, NULL, NULL), XRT_INVALID_ARGUMENT);
  assert_null(xrt_program_function_name(p, 1));
  assert_null(xrt_program_function_name(p, -1));
  xrt_program_release(p);
  assert_int_equal(xrt_compile(NULL, k_neg, n, NULL, &e), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_compile(c, NULL, n, NULL, &e), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_compile(c, k_neg, n, NULL, NULL), XRT_INVALID_ARGUMENT);
  assert_null(e);
  (void)xrt_executable_release(NULL);
  assert_int_equal(xrt_executable_num_inputs(NULL), -1);
  assert_int_equal(xrt_executable_num_outputs(NULL), -1);
  assert_int_equal(xrt_executable_input_shape(NULL, 0, &s), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_executable_output_shape(NULL, 0, &s), XRT_INVALID_ARGUMENT);
  (void)xrt_executable_name(NULL);
  assert_int_equal(xrt_client_register_host_function(NULL, "t", dummy_host_fn, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_client_register_host_function(c, NULL, dummy_host_fn, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_client_register_host_function(c, "t", NULL, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_string_equal(xrt_opcode_name(XRT_OP_ADD), "stablehlo.add");
  assert_string_equal(xrt_opcode_name(XRT_OP_FUNC_CALL), "func.call");
  assert_string_equal(xrt_opcode_name(XRT_OP_COUNT), "invalid");
  assert_string_equal(xrt_opcode_name((xrt_opcode)-1), "invalid");
}

static void test_null_execute_calls(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *d = xrt_client_device(c, 0);
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, k_neg, strlen(k_neg), NULL, &e), XRT_OK);
  xrt_shape s = TU_SHAPE(XRT_F32, 2), s2;
  assert_int_equal(xrt_executable_input_shape(e, 0, NULL), XRT_INVALID_ARGUMENT);
  assert_int_not_equal(xrt_executable_input_shape(e, 1, &s2), XRT_OK);
  assert_int_not_equal(xrt_executable_output_shape(e, -1, &s2), XRT_OK);
  float v[2] = {1, 2};
  xrt_buffer *b = NULL, *out[1] = {NULL};
  assert_int_equal(xrt_buffer_from_host(c, d, &s, v, &b), XRT_OK);
  xrt_buffer *args[1] = {b}, *nullarg[1] = {NULL};
  assert_int_equal(xrt_execute(NULL, d, args, 1, out, 1, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_execute(e, NULL, args, 1, out, 1, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_execute(e, d, NULL, 1, out, 1, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_execute(e, d, nullarg, 1, out, 1, NULL), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_execute(e, d, args, 1, NULL, 1, NULL), XRT_INVALID_ARGUMENT);
  assert_null(out[0]);
  xrt_buffer_release(b);
  xrt_executable_release(e);
}

/* ---- invalid shapes ---- */

static void expect_bad_shape(xrt_client *c, xrt_shape s) {
  xrt_buffer *b = NULL;
  static const char data[64];
  xrt_status st = xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, data, &b);
  if (st != XRT_INVALID_ARGUMENT)
    fail_msg("shape dtype %d rank %d dim0 %lld: got %s (%s)", (int)s.dtype,
             (int)s.rank, (long long)s.dims[0], xrt_strerror(st), xrt_last_error());
  assert_null(b);
  assert_true(strlen(xrt_last_error()) > 0);
}

static void test_bad_shapes(void **state) {
  xrt_client *c = (xrt_client *)*state;
  expect_bad_shape(c, TU_SHAPE(XRT_DTYPE_INVALID, 2));
  expect_bad_shape(c, TU_SHAPE((xrt_dtype)99, 2));
  expect_bad_shape(c, TU_SHAPE(XRT_F32, 2, -1));
  xrt_shape s = TU_SHAPE(XRT_F32, 1);
  s.rank = XRT_MAX_RANK + 1;
  expect_bad_shape(c, s);
  s.rank = -1;
  expect_bad_shape(c, s);
  /* Overflowing element count. */
  expect_bad_shape(c, TU_SHAPE(XRT_F64, INT64_MAX / 2, 4));
}

static void test_max_rank_ok(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_shape s = TU_SCALAR(XRT_U8);
  s.rank = XRT_MAX_RANK;
  for (int i = 0; i < XRT_MAX_RANK; i++) s.dims[i] = 1;
  uint8_t v = 42, back = 0;
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, &v, &b),
                   XRT_OK);
  assert_int_equal(xrt_buffer_to_host(b, &back, 1), XRT_OK);
  assert_int_equal(back, 42);
  xrt_buffer_release(b);
}

/* ---- stale and foreign handles ---- */

static void test_released_buffer(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *d = xrt_client_device(c, 0);
  xrt_shape s = TU_SHAPE(XRT_S32, 3), out;
  int32_t v[3] = {1, 2, 3};
  xrt_buffer *b = NULL, *b2 = NULL;
  assert_int_equal(xrt_buffer_from_host(c, d, &s, v, &b), XRT_OK);
  assert_int_equal(xrt_buffer_release(b), XRT_OK);
  assert_int_equal(xrt_buffer_to_host(b, v, sizeof v), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_shape(b, &out), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_bytes(b), 0);
  assert_null(xrt_buffer_device(b));
  assert_int_equal(xrt_buffer_copy_to_device(b, d, &b2), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_release(b), XRT_INVALID_ARGUMENT);
  assert_null(b2);
}

static void test_released_buffer_in_execute(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *d = xrt_client_device(c, 0);
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, k_neg, strlen(k_neg), NULL, &e), XRT_OK);
  xrt_shape s = TU_SHAPE(XRT_F32, 2);
  float v[2] = {1, 2};
  xrt_buffer *b = NULL, *out[1] = {NULL};
  assert_int_equal(xrt_buffer_from_host(c, d, &s, v, &b), XRT_OK);
  xrt_buffer_release(b);
  assert_int_equal(xrt_execute(e, d, &b, 1, out, 1, NULL), XRT_INVALID_ARGUMENT);
  assert_null(out[0]);
  assert_int_equal(xrt_executable_release(e), XRT_OK);
  assert_int_equal(xrt_executable_release(e), XRT_INVALID_ARGUMENT);
}

static void test_foreign_handles(void **state) {
  xrt_client *c1 = (xrt_client *)*state, *c2 = NULL;
  assert_int_equal(xrt_client_create(NULL, &c2), XRT_OK);
  xrt_device *d1 = xrt_client_device(c1, 0), *d2 = xrt_client_device(c2, 0);
  xrt_executable *e1 = NULL;
  assert_int_equal(xrt_compile(c1, k_neg, strlen(k_neg), NULL, &e1), XRT_OK);
  xrt_shape s = TU_SHAPE(XRT_F32, 2);
  float v[2] = {1, 2};
  xrt_buffer *b1 = NULL, *b2 = NULL, *x = NULL, *out[1] = {NULL};
  assert_int_equal(xrt_buffer_from_host(c1, d1, &s, v, &b1), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c2, d2, &s, v, &b2), XRT_OK);
  /* buffer of c2 given to an executable of c1 */
  assert_int_equal(xrt_execute(e1, d1, &b2, 1, out, 1, NULL), XRT_INVALID_ARGUMENT);
  /* device of c2 given to an executable of c1 */
  assert_int_equal(xrt_execute(e1, d2, &b1, 1, out, 1, NULL), XRT_INVALID_ARGUMENT);
  assert_null(out[0]);
  /* copy to a device of another client; upload to a foreign device */
  assert_int_equal(xrt_buffer_copy_to_device(b1, d2, &x), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_from_host(c1, d2, &s, v, &x), XRT_INVALID_ARGUMENT);
  assert_null(x);
  xrt_buffer_release(b1);
  xrt_executable_release(e1);
  xrt_client_release(c2); /* releases b2 */
}

/* ---- device memory limits ---- */

static void test_resource_exhausted(void **state) {
  (void)state;
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.device_memory_bytes = 1u << 20;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  xrt_device *d = xrt_client_device(c, 0);
  void *big = calloc(1, 2u << 20);
  xrt_shape s2m = TU_SHAPE(XRT_F32, (2 << 20) / 4);
  xrt_shape s600k = TU_SHAPE(XRT_U8, 600 * 1024);
  xrt_buffer *b = NULL, *b2 = NULL;
  assert_int_equal(xrt_buffer_from_host(c, d, &s2m, big, &b), XRT_RESOURCE_EXHAUSTED);
  assert_null(b);
  assert_true(strlen(xrt_last_error()) > 0);
  /* Live allocations are counted: two 600 KiB buffers do not fit in 1 MiB,
   * and releasing one makes room again. */
  assert_int_equal(xrt_buffer_from_host(c, d, &s600k, big, &b), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, d, &s600k, big, &b2),
                   XRT_RESOURCE_EXHAUSTED);
  assert_int_equal(xrt_buffer_release(b), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, d, &s600k, big, &b2), XRT_OK);
  xrt_buffer_release(b2);
  free(big);
  xrt_client_release(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strerror_distinct),
      cmocka_unit_test(test_last_error),
      cmocka_unit_test(test_dtype_table),
      cmocka_unit_test(test_dtype_invalid),
      cmocka_unit_test(test_shape_numel_bytes),
      cmocka_unit_test(test_shape_format),
      cmocka_unit_test(test_shape_format_truncates),
      cmocka_unit_test(test_client_options_defaults),
      cmocka_unit_test(test_client_default),
      cmocka_unit_test(test_client_four_devices),
      cmocka_unit_test(test_client_bad_num_devices),
      cmocka_unit_test(test_client_unknown_plugin),
      cmocka_unit_test(test_client_allocator),
      cmocka_unit_test(test_null_client_calls),
      cmocka_unit_test(test_null_buffer_calls),
      cmocka_unit_test(test_null_program_calls),
      cmocka_unit_test(test_null_execute_calls),
      cmocka_unit_test(test_bad_shapes),
      cmocka_unit_test(test_max_rank_ok),
      cmocka_unit_test(test_released_buffer),
      cmocka_unit_test(test_released_buffer_in_execute),
      cmocka_unit_test(test_foreign_handles),
      cmocka_unit_test(test_resource_exhausted),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
