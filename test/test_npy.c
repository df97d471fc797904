/* test_npy.c - the .npy reader and writer (src/core/npy.c) beyond the
 * round trips of test_buffers.c: every header-dict error (one table of
 * {header text, status, message fragment}), the preamble and version
 * checks, the header syntax numpy and older writers produce (double quotes,
 * tabs, 'L' suffixes, trailing commas, versions 2.0 and 3.0), the dtypes
 * test_buffers.c does not write (u8, i16, u16, u64, f64, c64, c128), the
 * types without an npy code, paths that are missing or a directory, and
 * the variable paths (pred normalisation, bf16 save).  Hand-made files
 * follow the NumPy format spec, so every expected value here comes from
 * the spec, not from xrt. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "test_util.h"

/* Writes a .npy file of format version major.0 with the header text hdr
 * as is (no padding: the reader needs none) followed by n data bytes. */
static void write_npy(const char *path, int major, const char *hdr,
                      const void *data, size_t n) {
  static unsigned char f[1 << 16];
  size_t hl = strlen(hdr), p = 0;
  memcpy(f, "\x93NUMPY", 6);
  f[6] = (unsigned char)major;
  f[7] = 0;
  p = 8;
  f[p++] = (unsigned char)(hl & 0xff);
  f[p++] = (unsigned char)(hl >> 8);
  if (major >= 2) {
    f[p++] = (unsigned char)(hl >> 16);
    f[p++] = (unsigned char)(hl >> 24);
  }
  memcpy(f + p, hdr, hl);
  p += hl;
  assert_true(p + n <= sizeof f);
  if (n) memcpy(f + p, data, n);
  tu_write_file(path, f, p + n);
}

/* Reads path expecting status code and a message containing sub. */
static void expect_fail(xrt_client *c, const char *path, xrt_status code,
                        const char *sub) {
  xrt_buffer *b = (xrt_buffer *)1;
  xrt_status st = xrt_buffer_from_npy(c, xrt_client_device(c, 0), path, &b);
  tu_save_error();
  if (st != code)
    fail_msg("%s: status %s, want %s (%s)", path, xrt_strerror(st),
             xrt_strerror(code), tu_msg);
  assert_null(b);
  TU_ASSERT_CONTAINS(tu_msg, sub);
  TU_ASSERT_CONTAINS(tu_msg, path);
}

typedef struct bad_header {
  const char *hdr;
  xrt_status code;
  const char *sub;
} bad_header;

static const bad_header bad_headers[] = {
    {"['descr']", XRT_INVALID_ARGUMENT, "bad npy header: header is not a dict"},
    {"{descr: '<f4'}", XRT_INVALID_ARGUMENT, "header dict has a malformed key"},
    {"{'descr", XRT_INVALID_ARGUMENT, "header dict has a malformed key"},
    {"{'de\\scr': 1}", XRT_INVALID_ARGUMENT, "header dict has a malformed key"},
    {"{'de\nscr': 1}", XRT_INVALID_ARGUMENT, "header dict has a malformed key"},
    {"{'descr' '<f4'}", XRT_INVALID_ARGUMENT, "header dict is missing a ':'"},
    {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}",
     XRT_UNIMPLEMENTED, "structured npy dtypes are not supported"},
    {"{'descr': 5}", XRT_INVALID_ARGUMENT, "'descr' is not a string"},
    {"{'fortran_order': Maybe}", XRT_INVALID_ARGUMENT,
     "'fortran_order' is not True or False"},
    {"{'fortran_order': Tru", XRT_INVALID_ARGUMENT,
     "'fortran_order' is not True or False"},
    {"{'shape': [3]}", XRT_INVALID_ARGUMENT, "'shape' is not a tuple"},
    {"{'shape': (-3,)}", XRT_INVALID_ARGUMENT,
     "'shape' has a negative dimension"},
    {"{'shape': (x,)}", XRT_INVALID_ARGUMENT,
     "'shape' has a dimension that is not a valid integer"},
    {"{'shape': (", XRT_INVALID_ARGUMENT,
     "'shape' has a dimension that is not a valid integer"},
    {"{'shape': (99999999999999999999,)}", XRT_INVALID_ARGUMENT,
     "'shape' has a dimension that is not a valid integer"},
    {"{'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}", XRT_UNIMPLEMENTED,
     "rank above 16 is not supported"},
    {"{'shape': (3 4)}", XRT_INVALID_ARGUMENT,
     "'shape' is not a tuple of integers"},
    {"{'foo': 1}", XRT_INVALID_ARGUMENT, "header dict has an unknown key"},
    {"{'descrX': 1}", XRT_INVALID_ARGUMENT, "header dict has an unknown key"},
    {"{'descr': '<f4' 'x'}", XRT_INVALID_ARGUMENT,
     "header dict is missing a ','"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
     XRT_INVALID_ARGUMENT, "header has text after the dict"},
    {"{'fortran_order': False, 'shape': (1,)}", XRT_INVALID_ARGUMENT,
     "header has no 'descr'"},
    {"{'descr': '<f4', 'shape': (1,)}", XRT_INVALID_ARGUMENT,
     "header has no 'fortran_order'"},
    {"{'descr': '<f4', 'fortran_order': False}", XRT_INVALID_ARGUMENT,
     "header has no 'shape'"},
    {"{'descr': 'f4', 'fortran_order': False, 'shape': (1,)}",
     XRT_INVALID_ARGUMENT, "'descr' 'f4' has no byte-order character"},
    {"{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}",
     XRT_UNIMPLEMENTED, "big-endian data ('>f4') is not supported"},
    {"{'descr': '<f4', 'fortran_order': True, 'shape': (1,)}",
     XRT_UNIMPLEMENTED, "fortran_order arrays are not supported"},
    /* A long descr is cut to 15 characters but still named. */
    {"{'descr': '<abcdefghijklmnopqrstuvwxyz', 'fortran_order': False, "
     "'shape': (1,)}",
     XRT_UNIMPLEMENTED, "npy dtype '<abcdefghijklmn' is not supported"},
    {"{'descr': '<f4', 'fortran_order': False, "
     "'shape': (4611686018427387904, 4)}",
     XRT_INVALID_ARGUMENT, "shape is too large (overflows)"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1000,)}",
     XRT_INVALID_ARGUMENT, "declares 4000 bytes of data, the file holds 0"},
};

static void test_bad_headers(void **state) {
  xrt_client *c = (xrt_client *)*state;
  char path[256];
  tu_tmp_path(path, sizeof path, "bad.npy");
  for (size_t i = 0; i < TU_COUNT(bad_headers); i++) {
    write_npy(path, 1, bad_headers[i].hdr, NULL, 0);
    expect_fail(c, path, bad_headers[i].code, bad_headers[i].sub);
  }
}

static void test_bad_preambles(void **state) {
  xrt_client *c = (xrt_client *)*state;
  char path[256];
  tu_tmp_path(path, sizeof path, "pre.npy");
  static const struct {
    const char *bytes;
    size_t n;
    xrt_status code;
    const char *sub;
  } cases[] = {
      {"\x93NUM", 4, XRT_INVALID_ARGUMENT, "file is truncated in the preamble"},
      {"\x93NUX", 4, XRT_INVALID_ARGUMENT, "not a .npy file (bad magic)"},
      {"", 0, XRT_INVALID_ARGUMENT, "not a .npy file (empty)"},
      {"\x93NUMPY\x04\x01\x00\x00", 10, XRT_UNIMPLEMENTED,
       "npy format version 4.1 is not supported"},
      {"\x93NUMPY\x00\x00\x00\x00", 10, XRT_UNIMPLEMENTED,
       "npy format version 0.0 is not supported"},
      /* Version 2.0 has a 4-byte header length: two bytes are not
       * enough. */
      {"\x93NUMPY\x02\x00\x10\x00", 10, XRT_INVALID_ARGUMENT,
       "the header length needs 4 bytes, only 2 present"},
      /* 2 MiB of header is refused before anything is allocated. */
      {"\x93NUMPY\x02\x00\x00\x00\x20\x00", 12, XRT_INVALID_ARGUMENT,
       "header length 2097152 is implausibly large"},
      /* A header of length 0 is not a dict. */
      {"\x93NUMPY\x01\x00\x00\x00", 10, XRT_INVALID_ARGUMENT,
       "header is not a dict"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    tu_write_file(path, cases[i].bytes, cases[i].n);
    expect_fail(c, path, cases[i].code, cases[i].sub);
  }
}

/* Reads path and checks its shape and bytes. */
static void expect_read(xrt_client *c, const char *path, xrt_shape want,
                        const void *bytes, size_t n) {
  xrt_buffer *b = NULL;
  if (xrt_buffer_from_npy(c, xrt_client_device(c, 0), path, &b) != XRT_OK)
    fail_msg("%s: %s", path, xrt_last_error());
  xrt_shape got;
  assert_int_equal(xrt_buffer_shape(b, &got), XRT_OK);
  assert_int_equal(got.dtype, want.dtype);
  assert_int_equal(got.rank, want.rank);
  for (int i = 0; i < want.rank; i++)
    assert_int_equal(got.dims[i], want.dims[i]);
  assert_int_equal(xrt_buffer_bytes(b), n);
  if (n) {
    unsigned char back[256];
    assert_true(n <= sizeof back);
    assert_int_equal(xrt_buffer_to_host(b, back, n), XRT_OK);
    assert_memory_equal(back, bytes, n);
  }
  xrt_buffer_release(b);
}

/* Header syntax other writers produce, all accepted. */
static void test_header_variants(void **state) {
  xrt_client *c = (xrt_client *)*state;
  char path[256];
  tu_tmp_path(path, sizeof path, "ok.npy");
  const float f2[2] = {1.5f, -2.0f};
  /* Double quotes, tabs, CR/LF, Python 2 'L' suffix, version 2.0. */
  write_npy(path, 2,
            "{\"descr\":\t\"<f4\",\r\n \"fortran_order\": False, "
            "\"shape\": (2L,)}\n",
            f2, sizeof f2);
  expect_read(c, path, TU_SHAPE(XRT_F32, 2), f2, sizeof f2);
  /* Version 3.0 (utf-8 header), keys in another order, native '=' order,
   * a trailing comma after the last dimension of a rank-2 shape. */
  const int16_t s6[6] = {1, -2, 3, -4, 5, 32767};
  write_npy(path, 3,
            "{'shape': (2, 3,), 'fortran_order': False, 'descr': '=i2'}", s6,
            sizeof s6);
  expect_read(c, path, TU_SHAPE(XRT_S16, 2, 3), s6, sizeof s6);
  /* One-byte types ignore the byte order, even '>'. */
  const uint8_t u3[3] = {0, 7, 255};
  write_npy(path, 1, "{'descr': '>u1', 'fortran_order': False, 'shape': (3,)}",
            u3, sizeof u3);
  expect_read(c, path, TU_SHAPE(XRT_U8, 3), u3, sizeof u3);
  /* An empty array: no data bytes at all. */
  write_npy(path, 1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 0)}", NULL,
            0);
  expect_read(c, path, TU_SHAPE(XRT_F64, 2, 0), NULL, 0);
  /* Scalars: shape (). */
  const uint64_t u64 = 0xfedcba9876543210ull;
  write_npy(path, 1, "{'descr': '<u8', 'fortran_order': False, 'shape': ()}",
            &u64, sizeof u64);
  expect_read(c, path, TU_SCALAR(XRT_U64), &u64, sizeof u64);
  /* numpy's bool bytes are 0/1, but any nonzero byte reads as exactly 1. */
  const uint8_t p4[4] = {0, 2, 255, 1}, p4want[4] = {0, 1, 1, 1};
  write_npy(path, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,)}",
            p4, sizeof p4);
  expect_read(c, path, TU_SHAPE(XRT_PRED, 4), p4want, sizeof p4want);
}

/* Writes a buffer, checks the descr in the header, reads it back. */
static void round_trip(xrt_client *c, xrt_shape s, const void *data,
                       const char *descr) {
  char path[256];
  tu_tmp_path(path, sizeof path, "rt.npy");
  size_t n = xrt_shape_bytes(&s);
  xrt_buffer *b = NULL;
  assert_int_equal(
      xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, data, &b), XRT_OK);
  assert_int_equal(xrt_buffer_to_npy(b, path), XRT_OK);
  xrt_buffer_release(b);
  size_t len;
  char *file = tu_read_file(path, &len);
  /* v1.0, header padded so that the data starts at a multiple of 64. */
  assert_memory_equal(file, "\x93NUMPY\x01\x00", 8);
  size_t hl = (size_t)(unsigned char)file[8] | (size_t)(unsigned char)file[9]
                                                   << 8;
  assert_int_equal((10 + hl) % 64, 0);
  assert_int_equal(len, 10 + hl + n);
  char want[32];
  snprintf(want, sizeof want, "'descr': '%s'", descr);
  TU_ASSERT_CONTAINS(file + 10, want);
  assert_memory_equal(file + 10 + hl, data, n);
  free(file);
  expect_read(c, path, s, data, n);
}

static void test_write_dtypes(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const uint8_t u8[3] = {1, 128, 255};
  round_trip(c, TU_SHAPE(XRT_U8, 3), u8, "|u1");
  const int8_t s8[2] = {-128, 127};
  round_trip(c, TU_SHAPE(XRT_S8, 2), s8, "|i1");
  const int16_t s16[2] = {-32768, 12345};
  round_trip(c, TU_SHAPE(XRT_S16, 2), s16, "<i2");
  const uint16_t u16[2] = {65535, 1};
  round_trip(c, TU_SHAPE(XRT_U16, 1, 2), u16, "<u2");
  const uint32_t u32[2] = {4000000000u, 7};
  round_trip(c, TU_SHAPE(XRT_U32, 2), u32, "<u4");
  const uint64_t u64[2] = {~0ull, 42};
  round_trip(c, TU_SHAPE(XRT_U64, 2), u64, "<u8");
  const double f64[3] = {3.25, -0.5, 1e300};
  round_trip(c, TU_SHAPE(XRT_F64, 3, 1), f64, "<f8");
  const float c64[4] = {1, 2, -3, 4}; /* two complex numbers */
  round_trip(c, TU_SHAPE(XRT_C64, 2), c64, "<c8");
  const double c128[2] = {0.25, -8};
  round_trip(c, TU_SCALAR(XRT_C128), c128, "<c16");
  /* A rank-16 shape still fits the header. */
  xrt_shape big =
      TU_SHAPE(XRT_S32, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2);
  const int32_t s32[2] = {-7, 9};
  round_trip(c, big, s32, "<i4");
}

static void test_write_errors(void **state) {
  xrt_client *c = (xrt_client *)*state;
  char path[256];
  tu_tmp_path(path, sizeof path, "bf.npy");
  xrt_shape s = TU_SHAPE(XRT_BF16, 2);
  const uint16_t v[2] = {0x3f80, 0x4000};
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, v, &b),
                   XRT_OK);
  assert_int_equal(xrt_buffer_to_npy(b, path), XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "element type bf16 has no npy dtype");
  assert_int_equal(xrt_buffer_to_npy(b, NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "path is NULL");
  xrt_buffer_release(b);
  /* A directory that does not exist: NOT_FOUND, and no file. */
  s = TU_SHAPE(XRT_F32, 1);
  const float one = 1;
  assert_int_equal(
      xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, &one, &b), XRT_OK);
  tu_tmp_path(path, sizeof path, "no/such/dir.npy");
  assert_int_equal(xrt_buffer_to_npy(b, path), XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(xrt_last_error(), "cannot create");
  xrt_buffer_release(b);
  /* Reading: NULL arguments and a missing file. */
  xrt_buffer *r = (xrt_buffer *)1;
  assert_int_equal(xrt_buffer_from_npy(c, xrt_client_device(c, 0), NULL, &r),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_buffer_from_npy: path is NULL");
  assert_null(r);
  assert_int_equal(xrt_buffer_from_npy(c, xrt_client_device(c, 0), path, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "out_buffer is NULL");
  assert_int_equal(xrt_buffer_from_npy(c, NULL, path, &r),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "invalid device");
  assert_int_equal(xrt_buffer_from_npy(c, xrt_client_device(c, 0), path, &r),
                   XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(xrt_last_error(), "cannot open");
  /* A directory: POSIX opens it for reading, then the read fails; it cannot
   * be created as a file either. */
#ifndef _WIN32
  assert_int_equal(
      xrt_buffer_from_npy(c, xrt_client_device(c, 0), tu_tmpdir(), &r),
      XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "cannot read: ");
  assert_null(r);
  assert_int_equal(
      xrt_buffer_from_host(c, xrt_client_device(c, 0), &s, &one, &b), XRT_OK);
  assert_int_equal(xrt_buffer_to_npy(b, tu_tmpdir()), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "cannot create: ");
  xrt_buffer_release(b);
#endif
}

/* Variables read the file through their own path: pred bytes are
 * normalised there too, and bf16 has no npy code on save. */
static void test_variables(void **state) {
  xrt_client *c = (xrt_client *)*state;
  char path[256];
  tu_tmp_path(path, sizeof path, "var.npy");
  xrt_device *d0 = xrt_client_device(c, 0);
  xrt_sharding_spec rep = tu_spec_replicated(1, 1);
  xrt_variable_format fmt = {&rep, &d0, 1};
  const uint8_t p4[4] = {3, 0, 1, 128}, want[4] = {1, 0, 1, 1};
  write_npy(path, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,)}",
            p4, sizeof p4);
  xrt_variable *v = NULL;
  if (xrt_variable_create_from_npy(c, "p", path, &fmt, &v) != XRT_OK)
    fail_msg("create_from_npy: %s", xrt_last_error());
  uint8_t got[4];
  assert_int_equal(xrt_variable_to_host(v, got, sizeof got), XRT_OK);
  assert_memory_equal(got, want, sizeof want);
  xrt_variable_release(v);
  /* A bad header fails the same way as for buffers. */
  write_npy(path, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (4,)}",
            NULL, 0);
  assert_int_equal(xrt_variable_create_from_npy(c, "p", path, &fmt, &v),
                   XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "fortran_order arrays are not supported");
  /* bf16 variables cannot be saved. */
  xrt_shape s = TU_SHAPE(XRT_BF16, 2);
  const uint16_t bf[2] = {0x3f80, 0x4000};
  assert_int_equal(xrt_variable_create(c, "b", &s, bf, &fmt, &v), XRT_OK);
  assert_int_equal(xrt_variable_save(v, path), XRT_UNIMPLEMENTED);
  TU_ASSERT_CONTAINS(xrt_last_error(), "element type bf16 has no npy dtype");
  xrt_variable_release(v);
}

TU_MAIN(tu_setup_client_tmpdir, tu_teardown_client_tmpdir,
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_bad_preambles),
        cmocka_unit_test(test_header_variants),
        cmocka_unit_test(test_write_dtypes),
        cmocka_unit_test(test_write_errors), cmocka_unit_test(test_variables))
