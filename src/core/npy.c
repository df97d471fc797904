/*
 * src/core/npy.c - NumPy .npy files: reading and writing.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * 14. NumPy files
 * ==================================================================== */

/* ======================================================================
 * .npy files (NumPy's array format, versions 1.0, 2.0 and 3.0)
 *
 * A file is: "\x93NUMPY", a major and minor version byte, the header length
 * (2 bytes little-endian in v1, 4 bytes in v2/v3), a Python dict literal
 * such as {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline, then the raw elements.  Only the public
 * buffer API is used here, so this file depends on nothing else in xrt.c
 * except xrt__fail.
 * ==================================================================== */

/* Uses <errno.h>, <stdio.h>, <stdlib.h> and <string.h>, included at the top
 * of xrt.c. */

#define XRT__NPY_MAGIC "\x93NUMPY"
#define XRT__NPY_MAGIC_LEN 6
/* numpy itself refuses headers above 10000 bytes by default; anything much
 * larger than that is a hostile or broken file, not an array. */
#define XRT__NPY_MAX_HEADER (1u << 20)

/* npy stores little-endian data and so does xrt; a big-endian host would
 * need byte swapping that is not written yet. */
static int xrt__npy_host_is_little(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* The descr codes xrt reads and writes, without the byte-order character. */
typedef struct xrt__npy_code {
  const char *code;
  xrt_dtype dtype;
} xrt__npy_code;

static const xrt__npy_code xrt__npy_codes[] = {
    {"b1", XRT_PRED}, {"i1", XRT_S8},   {"i2", XRT_S16}, {"i4", XRT_S32},
    {"i8", XRT_S64},  {"u1", XRT_U8},   {"u2", XRT_U16}, {"u4", XRT_U32},
    {"u8", XRT_U64},  {"f2", XRT_F16},  {"f4", XRT_F32}, {"f8", XRT_F64},
    {"c8", XRT_C64},  {"c16", XRT_C128},
};

/* ---- reading ---- */

/* A cursor over the header dict text. */
typedef struct xrt__npy_lex {
  const char *p, *end;
} xrt__npy_lex;

static void xrt__npy_skip_ws(xrt__npy_lex *lx) {
  while (lx->p < lx->end &&
         (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' || *lx->p == '\r'))
    lx->p++;
}

/* Consumes c (after blanks) if it is next; returns whether it was. */
static int xrt__npy_accept(xrt__npy_lex *lx, char c) {
  xrt__npy_skip_ws(lx);
  if (lx->p < lx->end && *lx->p == c) {
    lx->p++;
    return 1;
  }
  return 0;
}

/* A quoted Python string without escapes (npy never needs them): sets
 * *s and *n to its contents. */
static int xrt__npy_string(xrt__npy_lex *lx, const char **s, size_t *n) {
  xrt__npy_skip_ws(lx);
  if (lx->p >= lx->end || (*lx->p != '\'' && *lx->p != '"')) return 0;
  char q = *lx->p++;
  const char *start = lx->p;
  while (lx->p < lx->end && *lx->p != q) {
    if (*lx->p == '\\' || *lx->p == '\n') return 0;
    lx->p++;
  }
  if (lx->p >= lx->end) return 0;
  *s = start;
  *n = (size_t)(lx->p - start);
  lx->p++;
  return 1;
}

static int xrt__npy_word(xrt__npy_lex *lx, const char *w) {
  size_t n = strlen(w);
  xrt__npy_skip_ws(lx);
  if ((size_t)(lx->end - lx->p) < n || memcmp(lx->p, w, n) != 0) return 0;
  lx->p += n;
  return 1;
}

/* What the header dict says, before it is checked against xrt's types. */
typedef struct xrt__npy_header {
  char descr[16];
  int have_descr, have_order, have_shape;
  int fortran;
  xrt_shape shape;
} xrt__npy_header;

/* Parses a non-negative decimal dimension, refusing overflow. */
static int xrt__npy_dim(xrt__npy_lex *lx, int64_t *out) {
  xrt__npy_skip_ws(lx);
  if (lx->p >= lx->end || *lx->p < '0' || *lx->p > '9') return 0;
  int64_t v = 0;
  while (lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9') {
    int d = *lx->p++ - '0';
    if (v > (INT64_MAX - d) / 10) return 0;
    v = v * 10 + d;
  }
  /* Python 2 era writers put an L after longs: (3L, 4L). */
  if (lx->p < lx->end && *lx->p == 'L') lx->p++;
  *out = v;
  return 1;
}

/* The shape tuple: (), (3,), (2, 3) or (2, 3,).  Returns a static reason on
 * failure, NULL on success. */
static const char *xrt__npy_shape(xrt__npy_lex *lx, xrt_shape *shape) {
  if (!xrt__npy_accept(lx, '(')) return "'shape' is not a tuple";
  shape->rank = 0;
  if (xrt__npy_accept(lx, ')')) return NULL;
  for (;;) {
    xrt__npy_skip_ws(lx);
    if (lx->p < lx->end && *lx->p == '-') return "'shape' has a negative dimension";
    int64_t d;
    if (!xrt__npy_dim(lx, &d)) return "'shape' has a dimension that is not a valid integer";
    if (shape->rank >= XRT_MAX_RANK) return "rank";
    shape->dims[shape->rank++] = d;
    if (xrt__npy_accept(lx, ')')) return NULL;
    if (!xrt__npy_accept(lx, ',')) return "'shape' is not a tuple of integers";
    if (xrt__npy_accept(lx, ')')) return NULL;
  }
}

/* Parses the header dict into *h.  On failure returns a message (static or
 * in why[]) for the caller to report with the path. */
static const char *xrt__npy_parse_dict(const char *text, size_t len,
                                       xrt__npy_header *h) {
  xrt__npy_lex lx = {text, text + len};
  memset(h, 0, sizeof *h);
  if (!xrt__npy_accept(&lx, '{')) return "header is not a dict";
  while (!xrt__npy_accept(&lx, '}')) {
    const char *key;
    size_t klen;
    if (!xrt__npy_string(&lx, &key, &klen)) return "header dict has a malformed key";
    if (!xrt__npy_accept(&lx, ':')) return "header dict is missing a ':'";
    if (klen == 5 && memcmp(key, "descr", 5) == 0) {
      const char *v;
      size_t vlen;
      xrt__npy_skip_ws(&lx);
      if (lx.p < lx.end && lx.p[0] == '[') return "structured";
      if (!xrt__npy_string(&lx, &v, &vlen)) return "'descr' is not a string";
      if (vlen >= sizeof h->descr) vlen = sizeof h->descr - 1; /* still names it */
      memcpy(h->descr, v, vlen);
      h->descr[vlen] = 0;
      h->have_descr = 1;
    } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
      if (xrt__npy_word(&lx, "True")) h->fortran = 1;
      else if (xrt__npy_word(&lx, "False")) h->fortran = 0;
      else return "'fortran_order' is not True or False";
      h->have_order = 1;
    } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
      const char *why = xrt__npy_shape(&lx, &h->shape);
      if (why) return why;
      h->have_shape = 1;
    } else {
      return "header dict has an unknown key";
    }
    if (xrt__npy_accept(&lx, '}')) break;
    if (!xrt__npy_accept(&lx, ',')) return "header dict is missing a ','";
  }
  xrt__npy_skip_ws(&lx);
  if (lx.p != lx.end) return "header has text after the dict";
  if (!h->have_descr) return "header has no 'descr'";
  if (!h->have_order) return "header has no 'fortran_order'";
  if (!h->have_shape) return "header has no 'shape'";
  return NULL;
}

/* Maps a descr string to a dtype, or fails naming it. */
static xrt_status xrt__npy_dtype(const char *path, const char *descr,
                                 xrt_dtype *out) {
  char order = descr[0];
  const char *code = descr + 1;
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return xrt__fail(XRT_INVALID_ARGUMENT,
                     "%s: 'descr' '%s' has no byte-order character", path, descr);
  for (size_t i = 0; i < sizeof xrt__npy_codes / sizeof xrt__npy_codes[0]; i++) {
    if (strcmp(code, xrt__npy_codes[i].code) != 0) continue;
    xrt_dtype t = xrt__npy_codes[i].dtype;
    /* Byte order is meaningless for one-byte types; otherwise only
     * little-endian (or native on a little-endian host) is read. */
    if (xrt_dtype_size(t) > 1 && order == '>')
      return xrt__fail(XRT_UNIMPLEMENTED,
                       "%s: big-endian data ('%s') is not supported", path, descr);
    *out = t;
    return XRT_OK;
  }
  return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy dtype '%s' is not supported",
                   path, descr);
}

/* Reads exactly n bytes or explains why not. */
static xrt_status xrt__npy_read(FILE *f, const char *path, void *dst, size_t n,
                                const char *what) {
  if (n == 0) return XRT_OK;
  size_t got = fread(dst, 1, n, f);
  if (got == n) return XRT_OK;
  if (ferror(f))
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: cannot read %s: %s", path, what,
                     errno ? strerror(errno) : "read error");
  return xrt__fail(XRT_INVALID_ARGUMENT,
                   "%s: file is truncated: %s needs %zu bytes, only %zu present",
                   path, what, n, got);
}

/* Reads the magic, version and header dict, leaving f at the data; the
 * header's text is read into memory from a. */
static xrt_status xrt__npy_read_header(const xrt_allocator *a, FILE *f,
                                       const char *path, xrt__npy_header *h) {
  unsigned char pre[XRT__NPY_MAGIC_LEN + 2];
  errno = 0;
  size_t got = fread(pre, 1, sizeof pre, f);
  if (got != sizeof pre) {
    if (ferror(f))
      return xrt__fail(XRT_INVALID_ARGUMENT, "%s: cannot read: %s", path,
                       errno ? strerror(errno) : "read error");
    size_t m = got < XRT__NPY_MAGIC_LEN ? got : XRT__NPY_MAGIC_LEN;
    if (got == 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "%s: not a .npy file (empty)", path);
    if (memcmp(pre, XRT__NPY_MAGIC, m) != 0)
      return xrt__fail(XRT_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", path);
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: file is truncated in the preamble", path);
  }
  if (memcmp(pre, XRT__NPY_MAGIC, XRT__NPY_MAGIC_LEN) != 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", path);
  int major = pre[XRT__NPY_MAGIC_LEN];
  if (major < 1 || major > 3)
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy format version %d.%d is not supported",
                     path, major, pre[XRT__NPY_MAGIC_LEN + 1]);
  unsigned char lenb[4] = {0, 0, 0, 0};
  size_t lenn = major == 1 ? 2 : 4;
  xrt_status s = xrt__npy_read(f, path, lenb, lenn, "the header length");
  if (s) return s;
  uint32_t hlen = (uint32_t)lenb[0] | (uint32_t)lenb[1] << 8 |
                  (uint32_t)lenb[2] << 16 | (uint32_t)lenb[3] << 24;
  if (hlen > XRT__NPY_MAX_HEADER)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: header length %lu is implausibly large",
                     path, (unsigned long)hlen);
  char *text = (char *)xrt__alloc(a, hlen ? hlen : 1);
  if (!text)
    return xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: out of host memory for "
                     "the %lu-byte header", path, (unsigned long)hlen);
  s = xrt__npy_read(f, path, text, hlen, "the header");
  if (!s) {
    const char *why = xrt__npy_parse_dict(text, hlen, h);
    if (why && strcmp(why, "structured") == 0)
      s = xrt__fail(XRT_UNIMPLEMENTED, "%s: structured npy dtypes are not supported", path);
    else if (why && strcmp(why, "rank") == 0)
      s = xrt__fail(XRT_UNIMPLEMENTED, "%s: rank above %d is not supported", path,
                    XRT_MAX_RANK);
    else if (why)
      s = xrt__fail(XRT_INVALID_ARGUMENT, "%s: bad npy header: %s", path, why);
  }
  xrt__free(a, text);
  return s;
}

/* Whether the open file holds at least bytes more bytes: checked before
 * the data is allocated, so a short file cannot make xrt allocate what its
 * header claims. */
static xrt_status xrt__npy_check_size(FILE *f, const char *path,
                                      size_t bytes) {
  long here = ftell(f);
  if (here < 0 || fseek(f, 0, SEEK_END) != 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: cannot seek in the file",
                     path);
  long end = ftell(f);
  if (end < 0 || fseek(f, here, SEEK_SET) != 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: cannot seek in the file",
                     path);
  if ((uint64_t)(end - here) < (uint64_t)bytes)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: truncated: the header "
                     "declares %zu bytes of data, the file holds %ld", path,
                     bytes, end - here);
  return XRT_OK;
}

/* Checks the header against what xrt can hold and fills h->shape.dtype;
 * *bytes receives the data size (xrt__npy_check_size checks the file
 * holds it, before anything is allocated). */
static xrt_status xrt__npy_check(const char *path, xrt__npy_header *h,
                                 size_t *bytes) {
  if (h->fortran)
    return xrt__fail(XRT_UNIMPLEMENTED,
                     "%s: fortran_order arrays are not supported (save in C order)", path);
  xrt_status s = xrt__npy_dtype(path, h->descr, &h->shape.dtype);
  if (s) return s;
  /* The byte count must fit size_t and the element count int64. */
  size_t esize = xrt_dtype_size(h->shape.dtype);
  uint64_t total = esize; /* over the nonzero dimensions, as in
                            xrt__shape_check: strides must not overflow */
  bool empty = false;
  for (int32_t i = 0; i < h->shape.rank; i++) {
    uint64_t d = (uint64_t)h->shape.dims[i];
    if (d == 0) { empty = true; continue; }
    if (total > (uint64_t)INT64_MAX / d)
      return xrt__fail(XRT_INVALID_ARGUMENT, "%s: shape is too large (overflows)", path);
    total *= d;
  }
  if (total > (uint64_t)SIZE_MAX / 2)
    return xrt__fail(XRT_INVALID_ARGUMENT, "%s: shape is too large for this host", path);
  *bytes = empty ? 0 : (size_t)total;
  return XRT_OK;
}

/* Reads an opened file's array onto device (host memory from the
 * client's allocator). */
static xrt_status xrt__npy_load(FILE *f, xrt_client *client, xrt_device *device,
                                const char *path, xrt_buffer **out) {
  const xrt_allocator *a = &xrt__client_get(client)->allocator;
  xrt__npy_header h;
  size_t bytes = 0;
  xrt_status s = xrt__npy_read_header(a, f, path, &h);
  if (!s) s = xrt__npy_check(path, &h, &bytes);
  if (!s) s = xrt__npy_check_size(f, path, bytes);
  if (s) return s;
  void *data = NULL;
  if (bytes) {
    data = xrt__alloc(a, bytes);
    if (!data)
      return xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: cannot allocate %zu bytes", path, bytes);
  }
  s = xrt__npy_read(f, path, data, bytes, "the array data");
  if (!s && h.shape.dtype == XRT_PRED) {
    /* numpy writes 0/1, but xrt's pred must be exactly 0 or 1. */
    unsigned char *b = data;
    for (size_t i = 0; i < bytes; i++) b[i] = b[i] != 0;
  }
  if (!s) s = xrt_buffer_from_host(client, device, &h.shape, data, out);
  xrt__free(a, data);
  return s;
}

xrt_status xrt_buffer_from_npy(xrt_client *client, xrt_device *device,
                               const char *path, xrt_buffer **out_buffer) {
  if (out_buffer) *out_buffer = NULL;
  if (!path || !out_buffer)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_npy: %s is NULL",
                     path ? "out_buffer" : "path");
  /* Bad handles are reported before the file is touched. */
  if (xrt_client_device_count(client) < 0 || xrt_device_id(device) < 0)
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_from_npy: invalid %s",
                     xrt_client_device_count(client) < 0 ? "client" : "device");
  if (!xrt__npy_host_is_little())
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy on a big-endian host", path);
  errno = 0;
  FILE *f = xrt__os_fopen(path, "rb");
  if (!f) {
    int e = errno;
    xrt_status code = e == ENOENT ? XRT_NOT_FOUND
                      : e == EACCES ? XRT_PERMISSION_DENIED
                                    : XRT_INVALID_ARGUMENT;
    return xrt__fail(code, "%s: cannot open: %s", path,
                     e ? strerror(e) : "unknown error");
  }
  xrt_status s = xrt__npy_load(f, client, device, path, out_buffer);
  fclose(f); /* read-only: nothing to lose if closing fails */
  return s;
}

/* ---- writing ---- */

/* The descr for a dtype, or NULL if npy has no code for it. */
static const char *xrt__npy_descr(xrt_dtype t) {
  switch (t) {
  case XRT_PRED: return "|b1";
  case XRT_S8: return "|i1";
  case XRT_U8: return "|u1";
  case XRT_S16: return "<i2";
  case XRT_S32: return "<i4";
  case XRT_S64: return "<i8";
  case XRT_U16: return "<u2";
  case XRT_U32: return "<u4";
  case XRT_U64: return "<u8";
  case XRT_F16: return "<f2";
  case XRT_F32: return "<f4";
  case XRT_F64: return "<f8";
  case XRT_C64: return "<c8";
  case XRT_C128: return "<c16";
  default: return NULL;
  }
}

/* Formats the v1.0 preamble and header dict into buf (cap >= 512 bytes
 * holds any rank up to XRT_MAX_RANK); returns its length, a multiple of 64
 * as numpy writes it so that the data is aligned. */
static size_t xrt__npy_format_header(const xrt_shape *shape, const char *descr,
                                     char *buf, size_t cap) {
  char dict[480];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   descr);
  for (int32_t i = 0; i < shape->rank; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                  (long long)shape->dims[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", shape->rank == 1 ? "," : "");
  size_t body = (size_t)n + 1; /* + the final newline */
  size_t total = (XRT__NPY_MAGIC_LEN + 4 + body + 63) / 64 * 64;
  size_t hlen = total - XRT__NPY_MAGIC_LEN - 4;
  if (total > cap) return 0;
  memcpy(buf, XRT__NPY_MAGIC, XRT__NPY_MAGIC_LEN);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (char)(hlen & 0xff);
  buf[9] = (char)(hlen >> 8);
  memcpy(buf + 10, dict, (size_t)n);
  memset(buf + 10 + n, ' ', hlen - (size_t)n - 1);
  buf[total - 1] = '\n';
  return total;
}

/* Writes header and data to path; on any failure the partial file is
 * removed so a half-written array never looks valid. */
static xrt_status xrt__npy_write_file(const char *path, const char *hdr,
                                      size_t hlen, const void *data,
                                      size_t bytes) {
  errno = 0;
  FILE *f = xrt__os_fopen(path, "wb");
  if (!f) {
    int e = errno;
    return xrt__fail(e == ENOENT ? XRT_NOT_FOUND
                     : e == EACCES ? XRT_PERMISSION_DENIED
                                   : XRT_INVALID_ARGUMENT,
                     "%s: cannot create: %s", path, e ? strerror(e) : "unknown error");
  }
  int ok = fwrite(hdr, 1, hlen, f) == hlen;
  if (ok && bytes) ok = fwrite(data, 1, bytes, f) == bytes;
  int e = errno;
  if (fclose(f) != 0 && ok) {
    ok = 0;
    e = errno;
  }
  if (ok) return XRT_OK;
  remove(path);
  return xrt__fail(XRT_DATA_LOSS, "%s: write failed: %s", path,
                   e ? strerror(e) : "unknown error");
}

xrt_status xrt_buffer_to_npy(xrt_buffer *buffer, const char *path) {
  if (!path) return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_buffer_to_npy: path is NULL");
  xrt_shape shape;
  xrt_status s = xrt_buffer_shape(buffer, &shape);
  if (s) return s;
  if (!xrt__npy_host_is_little())
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy on a big-endian host", path);
  const char *descr = xrt__npy_descr(shape.dtype);
  if (!descr)
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: element type %s has no npy dtype", path,
                     xrt_dtype_name(shape.dtype));
  char hdr[576];
  size_t hlen = xrt__npy_format_header(&shape, descr, hdr, sizeof hdr);
  if (!hlen) return xrt__fail(XRT_INTERNAL, "%s: npy header too long", path);
  size_t bytes = xrt_buffer_bytes(buffer);
  xrt__buffer *b = xrt__buffer_acquire(buffer); /* for its client's allocator */
  if (!b) return xrt__fail(XRT_INVALID_ARGUMENT, "%s: invalid buffer", path);
  xrt_allocator a = b->client->allocator;
  xrt__buffer_unref(b);
  void *data = NULL;
  if (bytes) {
    data = xrt__alloc(&a, bytes);
    if (!data)
      return xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: cannot allocate %zu bytes", path, bytes);
    s = xrt_buffer_to_host(buffer, data, bytes);
  }
  if (!s) s = xrt__npy_write_file(path, hdr, hlen, data, bytes);
  xrt__free(&a, data);
  return s;
}

/* For variables (13c): reads a whole .npy file into malloc'd host memory
 * (*data, which the caller frees) and gives its shape, which must equal
 * want (if not NULL: checked before the data is read). */
XRT__PRIVATE xrt_status xrt__npy_read_host(const xrt_allocator *a, const char *path,
                                     const xrt_shape *want, xrt_shape *shape,
                                     void **data, size_t *bytes) {
  *data = NULL;
  if (!xrt__npy_host_is_little())
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy on a big-endian host", path);
  errno = 0;
  FILE *f = xrt__os_fopen(path, "rb");
  if (!f)
    return xrt__fail(errno == ENOENT ? XRT_NOT_FOUND : XRT_INVALID_ARGUMENT,
                     "%s: cannot open: %s", path,
                     errno ? strerror(errno) : "unknown error");
  xrt__npy_header h;
  xrt_status s = xrt__npy_read_header(a, f, path, &h);
  if (!s) s = xrt__npy_check(path, &h, bytes);
  if (!s && want && !xrt__shape_equal(&h.shape, want)) {
    char have_s[128], want_s[128];
    xrt_shape_format(&h.shape, have_s, sizeof have_s);
    xrt_shape_format(want, want_s, sizeof want_s);
    s = xrt__fail(XRT_INVALID_ARGUMENT, "%s holds %s, the variable is %s",
                  path, have_s, want_s);
  }
  if (!s) s = xrt__npy_check_size(f, path, *bytes);
  if (!s && *bytes && !(*data = xrt__alloc(a, *bytes)))
    s = xrt__fail(XRT_RESOURCE_EXHAUSTED, "%s: cannot allocate %zu bytes",
                  path, *bytes);
  if (!s) s = xrt__npy_read(f, path, *data, *bytes, "the array data");
  fclose(f);
  if (s) {
    xrt__free(a, *data);
    *data = NULL;
    return s;
  }
  *shape = h.shape;
  if (shape->dtype == XRT_PRED) /* as xrt__npy_load: exactly 0 or 1 */
    for (size_t i = 0; i < *bytes; i++)
      ((unsigned char *)*data)[i] = ((unsigned char *)*data)[i] != 0;
  return XRT_OK;
}

/* For variables (13c): writes host data of shape as a .npy file. */
XRT__PRIVATE xrt_status xrt__npy_write_host(const char *path, const xrt_shape *shape,
                                      const void *data, size_t bytes) {
  if (!xrt__npy_host_is_little())
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: npy on a big-endian host", path);
  const char *descr = xrt__npy_descr(shape->dtype);
  if (!descr)
    return xrt__fail(XRT_UNIMPLEMENTED, "%s: element type %s has no npy "
                     "dtype", path, xrt_dtype_name(shape->dtype));
  char hdr[576];
  size_t hlen = xrt__npy_format_header(shape, descr, hdr, sizeof hdr);
  if (!hlen) return xrt__fail(XRT_INTERNAL, "%s: npy header too long", path);
  return xrt__npy_write_file(path, hdr, hlen, data, bytes);
}
