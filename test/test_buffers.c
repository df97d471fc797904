/* test_buffers.c - host/device round trips for every dtype, odd shapes,
 * copies between devices, and .npy files. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "test_util.h"

/* Uploads bytes with shape s, downloads them and compares bit for bit. */
static void round_trip(xrt_client *c, int dev, xrt_shape s, const void *data,
                       size_t bytes) {
  xrt_buffer *b = NULL;
  xrt_device *d = xrt_client_device(c, dev);
  assert_int_equal(xrt_shape_bytes(&s), bytes);
  assert_int_equal(xrt_buffer_from_host(c, d, &s, data, &b), XRT_OK);
  assert_int_equal(xrt_buffer_bytes(b), bytes);
  assert_ptr_equal(xrt_buffer_device(b), d);
  xrt_shape got;
  assert_int_equal(xrt_buffer_shape(b, &got), XRT_OK);
  assert_int_equal(got.dtype, s.dtype);
  assert_int_equal(got.rank, s.rank);
  for (int i = 0; i < s.rank; i++) assert_int_equal(got.dims[i], s.dims[i]);
  unsigned char back[256];
  memset(back, 0xAB, sizeof back);
  assert_true(bytes <= sizeof back);
  assert_int_equal(xrt_buffer_to_host(b, back, sizeof back), XRT_OK);
  if (bytes) assert_memory_equal(back, data, bytes);
  assert_int_equal(xrt_buffer_release(b), XRT_OK);
}

#define RT(c, dt, type, ...)                                                \
  do {                                                                      \
    const type v_[] = {__VA_ARGS__};                                        \
    round_trip((c), 0, TU_SHAPE((dt), (int64_t)TU_COUNT(v_)), v_, sizeof v_); \
  } while (0)

static void test_round_trip_ints(void **state) {
  xrt_client *c = (xrt_client *)*state;
  RT(c, XRT_PRED, uint8_t, 0, 1, 1, 0);
  RT(c, XRT_S8, int8_t, -128, -1, 0, 127);
  RT(c, XRT_S16, int16_t, INT16_MIN, -1, 0, INT16_MAX);
  RT(c, XRT_S32, int32_t, INT32_MIN, -1, 0, INT32_MAX);
  RT(c, XRT_S64, int64_t, INT64_MIN, -1, 0, INT64_MAX);
  RT(c, XRT_U8, uint8_t, 0, 1, 200, 255);
  RT(c, XRT_U16, uint16_t, 0, 1, 40000, UINT16_MAX);
  RT(c, XRT_U32, uint32_t, 0, 1, 3000000000u, UINT32_MAX);
  RT(c, XRT_U64, uint64_t, 0, 1, 1ull << 63, UINT64_MAX);
}

static void test_round_trip_subbyte(void **state) {
  xrt_client *c = (xrt_client *)*state;
  /* One byte each, sign- or zero-extended, over the whole valid range. */
  RT(c, XRT_S2, int8_t, -2, -1, 0, 1);
  RT(c, XRT_S4, int8_t, -8, -7, -1, 0, 1, 7);
  RT(c, XRT_U2, uint8_t, 0, 1, 2, 3);
  RT(c, XRT_U4, uint8_t, 0, 1, 8, 15);
}

static void test_round_trip_floats(void **state) {
  xrt_client *c = (xrt_client *)*state;
  /* f16: 1.0, -0.0, inf, quiet NaN with payload, signaling NaN, subnormal */
  RT(c, XRT_F16, uint16_t, 0x3C00, 0x8000, 0x7C00, 0x7E01, 0x7C01, 0x0001);
  RT(c, XRT_BF16, uint16_t, 0x3F80, 0x8000, 0x7F80, 0x7FC1, 0x7F81, 0x0001);
  RT(c, XRT_F32, uint32_t, 0x3F800000u, 0x80000000u, 0xFF800000u,
     0x7FC12345u, 0x7F800001u, 0xFFFFFFFFu, 0x00000001u);
  RT(c, XRT_F64, uint64_t, 0x3FF0000000000000ull, 0x8000000000000000ull,
     0x7FF8000000000123ull, 0x7FF0000000000001ull, 0x0000000000000001ull);
  /* complex: (real, imag) pairs, including a NaN payload in the imag part */
  const uint32_t c64[4] = {0x3FC00000u, 0xC0000000u, 0x80000000u, 0x7FC00042u};
  round_trip(c, 0, TU_SHAPE(XRT_C64, 2), c64, sizeof c64);
  const uint64_t c128[4] = {0x3FF8000000000000ull, 0xC000000000000000ull,
                            0x8000000000000000ull, 0x7FF8000000000042ull};
  round_trip(c, 0, TU_SHAPE(XRT_C128, 2), c128, sizeof c128);
}

static void test_round_trip_scalar(void **state) {
  xrt_client *c = (xrt_client *)*state;
  double v = -3.25;
  round_trip(c, 0, TU_SCALAR(XRT_F64), &v, sizeof v);
  uint8_t p = 1;
  round_trip(c, 0, TU_SCALAR(XRT_PRED), &p, 1);
}

static void test_zero_size(void **state) {
  xrt_client *c = (xrt_client *)*state;
  float dummy = 0;
  round_trip(c, 0, TU_SHAPE(XRT_F32, 3, 0, 2), &dummy, 0);
  /* data may be NULL when there are no bytes */
  xrt_buffer *b = NULL;
  xrt_shape s = TU_SHAPE(XRT_S64, 0);
  assert_int_equal(
      xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, NULL, &b), XRT_OK);
  assert_int_equal(xrt_buffer_bytes(b), 0);
  assert_int_equal(xrt_buffer_to_host(b, &dummy, 0), XRT_OK);
  xrt_buffer_release(b);
}

static void test_rank5(void **state) {
  xrt_client *c = (xrt_client *)*state;
  int16_t v[2 * 1 * 3 * 1 * 2];
  for (int i = 0; i < 12; i++) v[i] = (int16_t)(i * 1000 - 5000);
  round_trip(c, 0, TU_SHAPE(XRT_S16, 2, 1, 3, 1, 2), v, sizeof v);
}

static void test_to_host_small_dst(void **state) {
  xrt_client *c = (xrt_client *)*state;
  int32_t v[4] = {1, 2, 3, 4}, back[4] = {0, 0, 0, 0};
  xrt_shape s = TU_SHAPE(XRT_S32, 4);
  xrt_buffer *b = NULL;
  assert_int_equal(
      xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, v, &b), XRT_OK);
  assert_int_not_equal(xrt_buffer_to_host(b, back, 15), XRT_OK);
  assert_true(strlen(xrt_last_error()) > 0);
  assert_int_not_equal(xrt_buffer_to_host(b, back, 0), XRT_OK);
  /* a bigger destination is fine: only the buffer's bytes are written */
  int32_t big[5] = {9, 9, 9, 9, 9};
  assert_int_equal(xrt_buffer_to_host(b, big, sizeof big), XRT_OK);
  const int32_t want[5] = {1, 2, 3, 4, 9};
  assert_memory_equal(big, want, sizeof want);
  xrt_buffer_release(b);
}

static void test_copy_between_devices(void **state) {
  (void)state;
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 4;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  const double v[3] = {1.5, -0.0, 1e300};
  xrt_shape s = TU_SHAPE(XRT_F64, 3);
  xrt_buffer *b0 = NULL, *b3 = NULL, *b1 = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, v, &b0),
                   XRT_OK);
  assert_int_equal(xrt_buffer_copy_to_device(b0, xrt_client_device(c, 3), &b3),
                   XRT_OK);
  assert_int_equal(xrt_device_id(xrt_buffer_device(b3)), 3);
  /* the source stays valid and a copy of a copy works too */
  assert_int_equal(xrt_buffer_release(b0), XRT_OK);
  assert_int_equal(xrt_buffer_copy_to_device(b3, xrt_client_device(c, 1), &b1),
                   XRT_OK);
  assert_int_equal(xrt_device_id(xrt_buffer_device(b1)), 1);
  double back[3];
  assert_int_equal(xrt_buffer_to_host(b3, back, sizeof back), XRT_OK);
  assert_memory_equal(back, v, sizeof v);
  memset(back, 0, sizeof back);
  assert_int_equal(xrt_buffer_to_host(b1, back, sizeof back), XRT_OK);
  assert_memory_equal(back, v, sizeof v);
  xrt_shape got;
  assert_int_equal(xrt_buffer_shape(b1, &got), XRT_OK);
  assert_int_equal(got.dtype, XRT_F64);
  assert_int_equal(got.dims[0], 3);
  /* b3 and b1 are released with the client */
  xrt_client_release(c);
}

/* ---- .npy ---- */

/* Checks the .npy header written by xrt against the format spec (v1.0). */
static void check_npy_header(const char *path, const char *descr,
                             const char *shape, size_t data_bytes) {
  size_t n;
  unsigned char *f = (unsigned char *)tu_read_file(path, &n);
  assert_true(n >= 10);
  assert_memory_equal(f, "\x93NUMPY\x01\x00", 8);
  size_t hlen = f[8] | ((size_t)f[9] << 8);
  assert_int_equal(n, 10 + hlen + data_bytes);
  assert_int_equal((10 + hlen) % 16, 0);
  assert_int_equal(f[10 + hlen - 1], '\n');
  char *h = calloc(1, hlen + 1);
  memcpy(h, f + 10, hlen);
  char want[128];
  snprintf(want, sizeof want, "'descr': '%s'", descr);
  TU_ASSERT_CONTAINS(h, want);
  TU_ASSERT_CONTAINS(h, "'fortran_order': False");
  snprintf(want, sizeof want, "'shape': %s", shape);
  TU_ASSERT_CONTAINS(h, want);
  free(h);
  free(f);
}

/* Writes a buffer to .npy, checks the header, reads it back bit-exact. */
static void npy_round_trip(xrt_client *c, const char *name, xrt_shape s,
                           const void *data, const char *descr,
                           const char *shape_str) {
  char path[256];
  tu_tmp_path(path, sizeof path, name);
  size_t bytes = xrt_shape_bytes(&s);
  xrt_device *d = xrt_client_device(c, 0);
  xrt_buffer *b = NULL, *r = NULL;
  assert_int_equal(xrt_buffer_from_host(c, d, &s, data, &b), XRT_OK);
  assert_int_equal(xrt_buffer_to_npy(b, path), XRT_OK);
  check_npy_header(path, descr, shape_str, bytes);
  assert_int_equal(xrt_buffer_from_npy(c, d, path, &r), XRT_OK);
  xrt_shape got;
  assert_int_equal(xrt_buffer_shape(r, &got), XRT_OK);
  assert_int_equal(got.dtype, s.dtype);
  assert_int_equal(got.rank, s.rank);
  for (int i = 0; i < s.rank; i++) assert_int_equal(got.dims[i], s.dims[i]);
  unsigned char back[128];
  assert_int_equal(xrt_buffer_to_host(r, back, sizeof back), XRT_OK);
  assert_memory_equal(back, data, bytes);
  xrt_buffer_release(b);
  xrt_buffer_release(r);
}

static void test_npy_f32(void **state) {
  const float v[6] = {1.5f, -2.0f, 0.0f, -0.0f, 1e-30f, 3.0e38f};
  npy_round_trip((xrt_client *)*state, "a.npy", TU_SHAPE(XRT_F32, 2, 3), v,
                 "<f4", "(2, 3)");
}

static void test_npy_i64(void **state) {
  const int64_t v[3] = {INT64_MIN, -1, INT64_MAX};
  npy_round_trip((xrt_client *)*state, "b.npy", TU_SHAPE(XRT_S64, 3), v, "<i8",
                 "(3,)");
}

static void test_npy_pred(void **state) {
  const uint8_t v[4] = {1, 0, 0, 1};
  npy_round_trip((xrt_client *)*state, "c.npy", TU_SHAPE(XRT_PRED, 2, 2), v,
                 "|b1", "(2, 2)");
}

static void test_npy_f16(void **state) {
  const uint16_t v[3] = {0x3C00, 0x7E01, 0x8000};
  npy_round_trip((xrt_client *)*state, "d.npy", TU_SHAPE(XRT_F16, 3), v, "<f2",
                 "(3,)");
}

static void test_npy_scalar(void **state) {
  const int32_t v = -7;
  npy_round_trip((xrt_client *)*state, "e.npy", TU_SCALAR(XRT_S32), &v, "<i4",
                 "()");
}

/* A .npy file made by hand here (as numpy writes it) reads correctly. */
static void test_npy_handmade(void **state) {
  xrt_client *c = (xrt_client *)*state;
  char path[256];
  tu_tmp_path(path, sizeof path, "hand.npy");
  unsigned char f[128 + 8];
  const char *hdr = "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), }";
  size_t hl = 118; /* 10 + 118 = 128 */
  memcpy(f, "\x93NUMPY\x01\x00", 8);
  f[8] = (unsigned char)hl;
  f[9] = 0;
  memset(f + 10, ' ', hl);
  memcpy(f + 10, hdr, strlen(hdr));
  f[10 + hl - 1] = '\n';
  const uint16_t data[4] = {1, 65535, 256, 7};
  memcpy(f + 128, data, 8);
  tu_write_file(path, f, sizeof f);
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_npy(c, xrt_client_device(c, 0), path, &b),
                   XRT_OK);
  xrt_shape s;
  assert_int_equal(xrt_buffer_shape(b, &s), XRT_OK);
  assert_int_equal(s.dtype, XRT_U16);
  assert_int_equal(s.rank, 2);
  uint16_t back[4];
  assert_int_equal(xrt_buffer_to_host(b, back, sizeof back), XRT_OK);
  assert_memory_equal(back, data, sizeof data);
  xrt_buffer_release(b);
}

/* Writes a file, reads it with from_npy, expects a failure with a message. */
static void expect_bad_npy(xrt_client *c, const char *name, const void *data,
                           size_t n) {
  char path[256];
  tu_tmp_path(path, sizeof path, name);
  tu_write_file(path, data, n);
  xrt_buffer *b = NULL;
  assert_int_not_equal(
      xrt_buffer_from_npy(c, xrt_client_device(c, 0), path, &b), XRT_OK);
  assert_null(b);
  assert_true(strlen(xrt_last_error()) > 0);
}

/* A valid v1.0 header for descr/shape with n data bytes. */
static size_t make_npy(unsigned char *f, const char *descr, const char *shape,
                       const void *data, size_t n) {
  char hdr[128];
  snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
           descr, shape);
  size_t hl = 118;
  memcpy(f, "\x93NUMPY\x01\x00", 8);
  f[8] = (unsigned char)hl;
  f[9] = 0;
  memset(f + 10, ' ', hl);
  memcpy(f + 10, hdr, strlen(hdr));
  f[10 + hl - 1] = '\n';
  if (n) memcpy(f + 128, data, n);
  return 128 + n;
}

static void test_npy_bad_files(void **state) {
  xrt_client *c = (xrt_client *)*state;
  unsigned char f[256];
  const float v[4] = {1, 2, 3, 4};
  size_t n = make_npy(f, "<f4", "(4,)", v, sizeof v);
  expect_bad_npy(c, "trunc_header.npy", f, 40);     /* cut inside the header */
  expect_bad_npy(c, "trunc_data.npy", f, n - 3);     /* cut inside the data */
  expect_bad_npy(c, "empty.npy", f, 0);
  unsigned char g[256];
  memcpy(g, f, n);
  g[1] = 'X'; /* "\x93XUMPY" */
  expect_bad_npy(c, "magic.npy", g, n);
  n = make_npy(f, "<f4", "(10,)", v, sizeof v); /* header says 10 elements */
  expect_bad_npy(c, "lies.npy", f, n);
  n = make_npy(f, "<c32", "(1,)", v, 4); /* unknown dtype */
  expect_bad_npy(c, "dtype.npy", f, n);
  n = make_npy(f, "<f4", "(2, -2)", v, sizeof v); /* negative dim */
  expect_bad_npy(c, "negdim.npy", f, n);
  const char junk[] = "\x93NUMPY\x01\x00\x10\x00{not a dict}   \n";
  expect_bad_npy(c, "junk.npy", junk, sizeof junk - 1);
}

static void test_npy_missing(void **state) {
  xrt_client *c = (xrt_client *)*state;
  char path[256];
  tu_tmp_path(path, sizeof path, "does_not_exist.npy");
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_npy(c, xrt_client_device(c, 0), path, &b),
                   XRT_NOT_FOUND);
  assert_null(b);
  TU_ASSERT_CONTAINS(xrt_last_error(), "does_not_exist.npy");
}

static void test_npy_unwritable(void **state) {
  xrt_client *c = (xrt_client *)*state;
  char path[256];
  tu_tmp_path(path, sizeof path, "no_dir/x.npy");
  float v = 1;
  xrt_shape s = TU_SCALAR(XRT_F32);
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, &v, &b),
                   XRT_OK);
  assert_int_not_equal(xrt_buffer_to_npy(b, path), XRT_OK);
  assert_true(strlen(xrt_last_error()) > 0);
  xrt_buffer_release(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_ints),
      cmocka_unit_test(test_round_trip_subbyte),
      cmocka_unit_test(test_round_trip_floats),
      cmocka_unit_test(test_round_trip_scalar),
      cmocka_unit_test(test_zero_size),
      cmocka_unit_test(test_rank5),
      cmocka_unit_test(test_to_host_small_dst),
      cmocka_unit_test(test_copy_between_devices),
      cmocka_unit_test(test_npy_f32),
      cmocka_unit_test(test_npy_i64),
      cmocka_unit_test(test_npy_pred),
      cmocka_unit_test(test_npy_f16),
      cmocka_unit_test(test_npy_scalar),
      cmocka_unit_test(test_npy_handmade),
      cmocka_unit_test(test_npy_bad_files),
      cmocka_unit_test(test_npy_missing),
      cmocka_unit_test(test_npy_unwritable),
  };
  return cmocka_run_group_tests(tests, tu_setup_client_tmpdir,
                                tu_teardown_client_tmpdir);
}
