/*
 * test_dlpack.c - DLPack exchange: xrt_buffer_to_dlpack and
 * xrt_buffer_from_dlpack, read and written through Debian's real
 * <dlpack/dlpack.h> (xrt.c carries its own layout-identical copy).
 *
 * Zero copy is shown by addresses: an export of an imported buffer points
 * at the importer's memory, two exports of one buffer share their data.
 * Lifetimes are shown by deleter counts and by reading memory after a
 * release (ASan reports a use after free if xrt freed it early).
 */
#include "test_util.h"

#include <dlpack/dlpack.h>
#include <pthread.h>

/* kDLBool is DLPack 0.8's code for bool; Debian's dlpack.h is 0.6. */
#define KDL_BOOL 6

/* xrt.c's private copy asserts the same numbers (LP64). */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4,
               "DLDevice, DLDataType");
_Static_assert(offsetof(DLTensor, data) == 0 &&
                   offsetof(DLTensor, device) == 8 &&
                   offsetof(DLTensor, ndim) == 16 &&
                   offsetof(DLTensor, dtype) == 20 &&
                   offsetof(DLTensor, shape) == 24 &&
                   offsetof(DLTensor, strides) == 32 &&
                   offsetof(DLTensor, byte_offset) == 40 &&
                   sizeof(DLTensor) == 48,
               "DLTensor layout");
_Static_assert(offsetof(DLManagedTensor, manager_ctx) == 48 &&
                   offsetof(DLManagedTensor, deleter) == 56 &&
                   sizeof(DLManagedTensor) == 64,
               "DLManagedTensor layout");
#endif

/* ---- a producer's tensors: counted deleters ---- */

/* A DLManagedTensor over memory it owns, freed by its deleter. */
typedef struct prod {
  DLManagedTensor t;
  int64_t shape[20], strides[20];
  void *raw;       /* the allocation */
  void *block;     /* its 64-byte aligned part, holding the data */
  int *deletions;  /* incremented by the deleter */
} prod;

static void prod_delete(DLManagedTensor *t) {
  prod *p = (prod *)t->manager_ctx;
  (*p->deletions)++;
  free(p->raw);
  free(p);
}

/* A tensor of ndim dims (strides NULL: dense) whose data starts `offset`
 * bytes into a 64-byte aligned block of `bytes` (filled by the caller
 * through data_out); the deleter increments *deletions. */
static prod *prod_new(DLDataType dt, int ndim, const int64_t *shape,
                      const int64_t *strides, size_t bytes, size_t offset,
                      int *deletions) {
  prod *p = (prod *)calloc(1, sizeof *p);
  assert_non_null(p);
  size_t cap = (bytes + offset + 63) / 64 * 64;
  /* aligned by hand: Windows has no aligned_alloc */
  p->raw = malloc((cap ? cap : 64) + 63);
  assert_non_null(p->raw);
  p->block = (void *)(((uintptr_t)p->raw + 63) & ~(uintptr_t)63);
  memset(p->block, 0, cap ? cap : 64);
  for (int i = 0; i < ndim && i < 20; i++) {
    p->shape[i] = shape[i];
    if (strides) p->strides[i] = strides[i];
  }
  p->deletions = deletions;
  p->t.dl_tensor.data = (char *)p->block + offset;
  p->t.dl_tensor.device.device_type = kDLCPU;
  p->t.dl_tensor.device.device_id = 0;
  p->t.dl_tensor.ndim = ndim;
  p->t.dl_tensor.dtype = dt;
  p->t.dl_tensor.shape = p->shape;
  p->t.dl_tensor.strides = strides ? p->strides : NULL;
  p->t.dl_tensor.byte_offset = 0;
  p->t.manager_ctx = p;
  p->t.deleter = prod_delete;
  return p;
}

static DLDataType dl_type(uint8_t code, uint8_t bits) {
  DLDataType t = {code, bits, 1};
  return t;
}

static xrt_shape shape_of(xrt_buffer *b) {
  xrt_shape s;
  assert_int_equal(xrt_buffer_shape(b, &s), XRT_OK);
  return s;
}

static void assert_host(xrt_buffer *b, const void *want, size_t bytes) {
  void *got = malloc(bytes ? bytes : 1);
  assert_int_equal(xrt_buffer_bytes(b), bytes);
  assert_int_equal(xrt_buffer_to_host(b, got, bytes), XRT_OK);
  assert_memory_equal(got, want, bytes);
  free(got);
}

/* The data pointer of an export of b (the export is deleted at once). */
static const void *export_address(xrt_buffer *b) {
  DLManagedTensor *t = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(b, &t), XRT_OK);
  const void *p = t->dl_tensor.data;
  t->deleter(t);
  return p;
}

/* ---- export ---- */

/* One element type: its xrt type, DLPack code and bits. */
typedef struct dtype_case {
  xrt_dtype xt;
  uint8_t code, bits;
  size_t size;
} dtype_case;

static const dtype_case kTypes[] = {
    {XRT_PRED, KDL_BOOL, 8, 1},     {XRT_S8, kDLInt, 8, 1},
    {XRT_S16, kDLInt, 16, 2},       {XRT_S32, kDLInt, 32, 4},
    {XRT_S64, kDLInt, 64, 8},       {XRT_U8, kDLUInt, 8, 1},
    {XRT_U16, kDLUInt, 16, 2},      {XRT_U32, kDLUInt, 32, 4},
    {XRT_U64, kDLUInt, 64, 8},      {XRT_F16, kDLFloat, 16, 2},
    {XRT_BF16, kDLBfloat, 16, 2},   {XRT_F32, kDLFloat, 32, 4},
    {XRT_F64, kDLFloat, 64, 8},     {XRT_C64, kDLComplex, 64, 8},
    {XRT_C128, kDLComplex, 128, 16},
};

/* Every supported type exports with its DLPack code and bits, a 2x3 shape
 * with row-major strides, kDLCPU, and the buffer's bytes; and imports
 * back as the same xrt type (copied: the memory is the live buffer's). */
static void test_export_every_dtype(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  for (size_t k = 0; k < TU_COUNT(kTypes); k++) {
    const dtype_case *dc = &kTypes[k];
    xrt_shape s = TU_SHAPE(dc->xt, 2, 3);
    unsigned char data[6 * 16];
    for (size_t i = 0; i < 6 * dc->size; i++)
      data[i] = (unsigned char)(dc->xt == XRT_PRED ? (i % 3 == 0)
                                                   : (i * 7 + k) & 0x3f);
    xrt_buffer *b = NULL;
    assert_int_equal(xrt_buffer_from_host(c, dev, &s, data, &b), XRT_OK);
    DLManagedTensor *t = NULL;
    assert_int_equal(xrt_buffer_to_dlpack(b, &t), XRT_OK);
    DLTensor *dl = &t->dl_tensor;
    assert_int_equal(dl->device.device_type, kDLCPU);
    assert_int_equal(dl->device.device_id, 0);
    assert_int_equal(dl->ndim, 2);
    assert_int_equal(dl->dtype.code, dc->code);
    assert_int_equal(dl->dtype.bits, dc->bits);
    assert_int_equal(dl->dtype.lanes, 1);
    assert_int_equal(dl->shape[0], 2);
    assert_int_equal(dl->shape[1], 3);
    assert_non_null(dl->strides);
    assert_int_equal(dl->strides[0], 3);
    assert_int_equal(dl->strides[1], 1);
    assert_int_equal(dl->byte_offset, 0);
    assert_memory_equal(dl->data, data, 6 * dc->size);
    /* back: the same type and bytes */
    xrt_buffer *back = NULL;
    assert_int_equal(xrt_buffer_from_dlpack(c, dev, t, &back), XRT_OK);
    xrt_shape bs = shape_of(back);
    assert_int_equal(bs.dtype, dc->xt);
    assert_int_equal(bs.rank, 2);
    assert_int_equal(bs.dims[0], 2);
    assert_int_equal(bs.dims[1], 3);
    assert_host(back, data, 6 * dc->size);
    xrt_buffer_release(back);
    xrt_buffer_release(b);
  }
}

/* A rank-0 and an empty buffer export too. */
static void test_export_scalar_and_empty(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  double x = -2.5;
  xrt_shape s0 = TU_SCALAR(XRT_F64), se = TU_SHAPE(XRT_S32, 4, 0);
  xrt_buffer *b0 = NULL, *be = NULL;
  assert_int_equal(xrt_buffer_from_host(c, dev, &s0, &x, &b0), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, dev, &se, NULL, &be), XRT_OK);
  DLManagedTensor *t0 = NULL, *te = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(b0, &t0), XRT_OK);
  assert_int_equal(xrt_buffer_to_dlpack(be, &te), XRT_OK);
  assert_int_equal(t0->dl_tensor.ndim, 0);
  assert_true(*(const double *)t0->dl_tensor.data == -2.5);
  assert_int_equal(te->dl_tensor.ndim, 2);
  assert_int_equal(te->dl_tensor.shape[0], 4);
  assert_int_equal(te->dl_tensor.shape[1], 0);
  /* an empty tensor imports as an empty buffer (copied: nothing to wrap) */
  xrt_buffer *back = NULL;
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, te, &back), XRT_OK);
  xrt_shape bs = shape_of(back);
  assert_int_equal(bs.rank, 2);
  assert_int_equal(bs.dims[1], 0);
  assert_int_equal(xrt_buffer_bytes(back), 0);
  t0->deleter(t0);
  xrt_buffer_release(back);
  xrt_buffer_release(b0);
  xrt_buffer_release(be);
}

/* The simulator's memory is host memory: exports share the buffer's
 * memory, which stays valid after xrt_buffer_release until the last
 * deleter runs (ASan would report the reads below otherwise). */
static void test_export_zero_copy_lifetime(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  int32_t data[1000];
  for (int i = 0; i < 1000; i++) data[i] = i * i - 7;
  xrt_shape s = TU_SHAPE(XRT_S32, 10, 100);
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_host(c, dev, &s, data, &b), XRT_OK);
  DLManagedTensor *t1 = NULL, *t2 = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(b, &t1), XRT_OK);
  assert_int_equal(xrt_buffer_to_dlpack(b, &t2), XRT_OK);
  assert_ptr_equal(t1->dl_tensor.data, t2->dl_tensor.data);
  assert_ptr_not_equal(t1, t2);
  assert_int_equal(xrt_buffer_release(b), XRT_OK);
  /* a new buffer of the size would reuse freed device memory */
  int32_t other[1000];
  for (int i = 0; i < 1000; i++) other[i] = -i;
  xrt_buffer *o1 = NULL, *o2 = NULL;
  assert_int_equal(xrt_buffer_from_host(c, dev, &s, other, &o1), XRT_OK);
  assert_memory_equal(t1->dl_tensor.data, data, sizeof data);
  t1->deleter(t1);
  assert_int_equal(xrt_buffer_from_host(c, dev, &s, other, &o2), XRT_OK);
  assert_memory_equal(t2->dl_tensor.data, data, sizeof data);
  t2->deleter(t2);
  xrt_buffer_release(o1);
  xrt_buffer_release(o2);
}

static const char *kTwice =
    "func.func @main(%x: tensor<37xf64>) -> tensor<37xf64> {\n"
    "  %0 = stablehlo.add %x, %x : tensor<37xf64>\n"
    "  func.return %0 : tensor<37xf64>\n"
    "}\n";

/* Exporting a buffer that is still being computed waits for it; a
 * poisoned buffer gives its producer's error and no tensor. */
static void test_export_waits_and_poison(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_executable *e = tu_compile(c, kTwice, 0, NULL);
  double x[37], want[37];
  for (int i = 0; i < 37; i++) {
    x[i] = i * 0.25 - 3;
    want[i] = x[i] + x[i];
  }
  xrt_shape s = TU_SHAPE(XRT_F64, 37);
  xrt_buffer *in = NULL, *out = NULL, *bad = NULL;
  assert_int_equal(xrt_buffer_from_host(c, dev, &s, x, &in), XRT_OK);
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_async(e, dev, &in, 1, &out, 1, NULL, &done),
                   XRT_OK);
  DLManagedTensor *t = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(out, &t), XRT_OK);
  assert_memory_equal(t->dl_tensor.data, want, sizeof want);
  t->deleter(t);
  xrt_event_release(done);
  assert_int_equal(xrt_device_inject_fault(dev, 0), XRT_OK);
  assert_int_equal(xrt_execute_async(e, dev, &in, 1, &bad, 1, NULL, &done),
                   XRT_OK);
  t = (DLManagedTensor *)&t; /* must be reset */
  assert_int_not_equal(xrt_buffer_to_dlpack(bad, &t), XRT_OK);
  assert_null(t);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device 0");
  assert_int_not_equal(xrt_event_await(done), XRT_OK);
  xrt_event_release(done);
  xrt_client_release(c);
}

/* Bad export calls, and types DLPack cannot describe. */
static void test_export_errors(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  DLManagedTensor *t = NULL;
  uint8_t raw[4] = {1, 2, 3, 4};
  xrt_buffer *b = NULL;
  xrt_shape s = TU_SHAPE(XRT_F8E4M3FN, 4);
  assert_int_equal(xrt_buffer_from_host(c, dev, &s, raw, &b), XRT_OK);
  assert_int_equal(xrt_buffer_to_dlpack(b, &t), XRT_UNIMPLEMENTED);
  assert_null(t);
  TU_ASSERT_CONTAINS(xrt_last_error(), "f8E4M3FN");
  assert_int_equal(xrt_buffer_to_dlpack(b, NULL), XRT_INVALID_ARGUMENT);
  xrt_buffer_release(b);
  assert_int_equal(xrt_buffer_to_dlpack(b, &t), XRT_INVALID_ARGUMENT);
  assert_null(t);
  assert_int_equal(xrt_buffer_to_dlpack(NULL, &t), XRT_INVALID_ARGUMENT);
}

/* ---- import ---- */

/* A dense, aligned tensor is wrapped: the buffer's memory is the
 * producer's (an export of it points there), and the deleter runs once,
 * when the buffer is released (not before, though results computed from
 * it live on). */
static void test_import_zero_copy(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  int deleted = 0;
  int64_t shape[1] = {37};
  prod *p = prod_new(dl_type(kDLFloat, 64), 1, shape, NULL, 37 * 8, 0,
                     &deleted);
  double *x = (double *)p->t.dl_tensor.data, want[37];
  for (int i = 0; i < 37; i++) {
    x[i] = 1.0 / (i + 1);
    want[i] = 2.0 / (i + 1);
  }
  xrt_buffer *b = NULL, *out = NULL;
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &b), XRT_OK);
  assert_int_equal(deleted, 0);
  assert_ptr_equal(export_address(b), x);
  xrt_shape s = shape_of(b);
  assert_int_equal(s.dtype, XRT_F64);
  assert_int_equal(s.rank, 1);
  assert_int_equal(s.dims[0], 37);
  xrt_executable *e = tu_compile(c, kTwice, 0, NULL);
  assert_int_equal(xrt_execute(e, dev, &b, 1, &out, 1, NULL), XRT_OK);
  assert_int_equal(deleted, 0);
  assert_int_equal(xrt_buffer_release(b), XRT_OK);
  assert_int_equal(deleted, 1);
  assert_host(out, want, sizeof want);
  assert_int_equal(deleted, 1);
  xrt_buffer_release(out);
  xrt_executable_release(e);
}

/* A zero-copy import keeps the producer's memory until an export of it is
 * deleted too: the deleter waits for the last user. */
static void test_import_then_export_keeps_memory(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  int deleted = 0;
  int64_t shape[2] = {3, 5};
  prod *p = prod_new(dl_type(kDLInt, 16), 2, shape, NULL, 30, 0, &deleted);
  int16_t *x = (int16_t *)p->t.dl_tensor.data, copy[15];
  for (int i = 0; i < 15; i++) copy[i] = x[i] = (int16_t)(i * 100 - 700);
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &b), XRT_OK);
  DLManagedTensor *t = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(b, &t), XRT_OK);
  assert_ptr_equal(t->dl_tensor.data, x);
  xrt_buffer_release(b);
  assert_int_equal(deleted, 0);
  assert_memory_equal(t->dl_tensor.data, copy, sizeof copy);
  t->deleter(t);
  assert_int_equal(deleted, 1);
}

/* The reference gather: element (i, j, k) of a strided 3-d view. */
static float strided_at(const char *base, const int64_t *st, int64_t i,
                        int64_t j, int64_t k) {
  float v;
  memcpy(&v, base + (i * st[0] + j * st[1] + k * st[2]) * 4, 4);
  return v;
}

/* Strided tensors are copied, in row-major order, honouring byte_offset
 * (and negative strides); the deleter runs before the import returns. */
static void test_import_strided_copies(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  /* A 2x3x4 view of a 4x5x6 block: transposed, stepped, one reversed. */
  static const int64_t shape[3] = {2, 3, 4};
  static const int64_t strides[][3] = {
      {1, 6 * 5, 6},       /* dims permuted */
      {60, 12, 1},         /* stepped, inner contiguous */
      {-60, 6, 2},         /* first reversed, inner stepped */
  };
  static const uint64_t offsets[] = {4, 8, 60 * 4 + 4};
  for (size_t k = 0; k < TU_COUNT(strides); k++) {
    int deleted = 0;
    prod *p = prod_new(dl_type(kDLFloat, 32), 3, shape, strides[k],
                       120 * 4 + 64, 0, &deleted);
    float *block = (float *)p->t.dl_tensor.data;
    for (int i = 0; i < 120 + 16; i++) block[i] = (float)(i * 3 + 1);
    p->t.dl_tensor.byte_offset = offsets[k];
    const char *base = (const char *)block + offsets[k];
    float want[24];
    int n = 0;
    for (int64_t i = 0; i < 2; i++)
      for (int64_t j = 0; j < 3; j++)
        for (int64_t l = 0; l < 4; l++)
          want[n++] = strided_at(base, strides[k], i, j, l);
    xrt_buffer *b = NULL;
    assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &b), XRT_OK);
    assert_int_equal(deleted, 1); /* copied: released at once */
    xrt_shape s = shape_of(b);
    assert_int_equal(s.rank, 3);
    assert_int_equal(s.dims[0], 2);
    assert_int_equal(s.dims[2], 4);
    assert_host(b, want, sizeof want);
    xrt_buffer_release(b);
  }
}

/* Dense strides (given explicitly, with any stride on a size-1
 * dimension) and a byte_offset still wrap; memory the simulator cannot
 * adopt (not 16-byte aligned) is copied. */
static void test_import_dense_strides_and_alignment(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  static const int64_t shape[3] = {2, 1, 3}, strides[3] = {3, 99, 1};
  int deleted = 0;
  prod *p = prod_new(dl_type(kDLUInt, 32), 3, shape, strides, 64 + 24, 0,
                     &deleted);
  uint32_t *block = (uint32_t *)p->t.dl_tensor.data;
  for (int i = 0; i < 22; i++) block[i] = (uint32_t)(i * 11u + 5u);
  p->t.dl_tensor.byte_offset = 64;
  xrt_buffer *b = NULL;
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &b), XRT_OK);
  assert_int_equal(deleted, 0);
  assert_ptr_equal(export_address(b), block + 16);
  assert_host(b, block + 16, 24);
  xrt_buffer_release(b);
  assert_int_equal(deleted, 1);

  /* 4 bytes past a 64-byte boundary: copied */
  deleted = 0;
  int64_t n[1] = {5};
  p = prod_new(dl_type(kDLFloat, 32), 1, n, NULL, 20, 4, &deleted);
  float want[5] = {1.5f, -2, 3.25f, 1e30f, -0.0f};
  memcpy(p->t.dl_tensor.data, want, sizeof want);
  const void *host = p->t.dl_tensor.data;
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &b), XRT_OK);
  assert_int_equal(deleted, 1);
  assert_ptr_not_equal(export_address(b), host);
  assert_host(b, want, sizeof want);
  xrt_buffer_release(b);
}

static const char *kMatVec =
    "func.func @main(%a: tensor<3x4xf32>, %v: tensor<4xf32>)"
    " -> tensor<3xf32> {\n"
    "  %0 = stablehlo.dot_general %a, %v, contracting_dims = [1] x [0]"
    " : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>\n"
    "  func.return %0 : tensor<3xf32>\n"
    "}\n";

/* A program runs on imported buffers, one wrapped and one copied from a
 * strided (transposed) view, and gives the reference results. */
static void test_execute_on_imports(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  int del_a = 0, del_v = 0;
  static const int64_t ashape[2] = {3, 4}, at_strides[2] = {1, 3};
  static const int64_t vshape[1] = {4};
  /* a is stored transposed (column-major): a[i][j] at j * 3 + i */
  prod *pa = prod_new(dl_type(kDLFloat, 32), 2, ashape, at_strides, 48, 0,
                      &del_a);
  prod *pv = prod_new(dl_type(kDLFloat, 32), 1, vshape, NULL, 16, 0, &del_v);
  float *am = (float *)pa->t.dl_tensor.data, *v = (float *)pv->t.dl_tensor.data;
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < 3; i++) am[j * 3 + i] = (float)(i * 4 + j) - 5.0f;
  for (int j = 0; j < 4; j++) v[j] = 0.5f * (float)j + 1;
  double want[3];
  for (int i = 0; i < 3; i++) {
    want[i] = 0;
    for (int j = 0; j < 4; j++) want[i] += (double)am[j * 3 + i] * v[j];
  }
  xrt_buffer *args[2] = {NULL, NULL}, *out = NULL;
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &pa->t, &args[0]), XRT_OK);
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &pv->t, &args[1]), XRT_OK);
  assert_int_equal(del_a, 1);
  assert_int_equal(del_v, 0);
  xrt_executable *e = tu_compile(c, kMatVec, 0, NULL);
  assert_int_equal(xrt_execute(e, dev, args, 2, &out, 1, NULL), XRT_OK);
  float got[3];
  assert_int_equal(xrt_buffer_to_host(out, got, sizeof got), XRT_OK);
  for (int i = 0; i < 3; i++) assert_true(fabs(got[i] - want[i]) < 1e-4);
  xrt_buffer_release(args[0]);
  xrt_buffer_release(args[1]);
  assert_int_equal(del_v, 1);
  xrt_buffer_release(out);
  xrt_executable_release(e);
}

/* Export then import: on another device of the client the buffer wraps
 * the exported memory (zero copy, and the source buffer lives on through
 * the tensor); on the exporting device itself it is copied (the
 * simulator names memory by address), and the tensor is deleted at once. */
static void test_round_trip(void **state) {
  (void)state;
  xrt_client *c = tu_client(2, 1, 0);
  xrt_device *d0 = xrt_client_device(c, 0), *d1 = xrt_client_device(c, 1);
  uint64_t data[64];
  for (int i = 0; i < 64; i++) data[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
  xrt_shape s = TU_SHAPE(XRT_U64, 8, 8);
  xrt_buffer *src = NULL, *on1 = NULL, *on0 = NULL;
  assert_int_equal(xrt_buffer_from_host(c, d0, &s, data, &src), XRT_OK);
  const void *mem = export_address(src);
  DLManagedTensor *t1 = NULL, *t0 = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(src, &t1), XRT_OK);
  assert_int_equal(xrt_buffer_to_dlpack(src, &t0), XRT_OK);
  xrt_buffer_release(src); /* the tensors keep the memory */
  assert_int_equal(xrt_buffer_from_dlpack(c, d1, t1, &on1), XRT_OK);
  assert_ptr_equal(export_address(on1), mem);
  assert_ptr_equal(xrt_buffer_device(on1), d1);
  assert_int_equal(xrt_buffer_from_dlpack(c, d0, t0, &on0), XRT_OK);
  assert_ptr_not_equal(export_address(on0), mem);
  assert_host(on1, data, sizeof data);
  assert_host(on0, data, sizeof data);
  xrt_buffer_release(on0);
  xrt_buffer_release(on1); /* deletes t1, the last reference to src */
  /* and across clients, zero copy too */
  xrt_client *c2 = tu_client(1, 1, 0);
  assert_int_equal(xrt_buffer_from_host(c, d0, &s, data, &src), XRT_OK);
  assert_int_equal(xrt_buffer_to_dlpack(src, &t1), XRT_OK);
  xrt_buffer *other = NULL;
  assert_int_equal(xrt_buffer_from_dlpack(c2, xrt_client_device(c2, 0), t1,
                                          &other), XRT_OK);
  assert_ptr_equal(export_address(other), export_address(src));
  xrt_buffer_release(src);
  assert_host(other, data, sizeof data);
  xrt_client_release(c2); /* frees other, deleting t1 */
  xrt_client_release(c);
}

/* One host array imported twice with the same size is wrapped twice;
 * with another size at the same address it is copied. */
static void test_import_same_memory_twice(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  int d1 = 0, d2 = 0, d3 = 0;
  int64_t n8[1] = {8}, n4[1] = {4};
  prod *p1 = prod_new(dl_type(kDLInt, 32), 1, n8, NULL, 32, 0, &d1);
  int32_t *x = (int32_t *)p1->t.dl_tensor.data;
  for (int i = 0; i < 8; i++) x[i] = 10 * i + 1;
  /* p2 and p3 view p1's memory (their own blocks are spare) */
  prod *p2 = prod_new(dl_type(kDLInt, 32), 1, n8, NULL, 0, 0, &d2);
  prod *p3 = prod_new(dl_type(kDLInt, 32), 1, n4, NULL, 0, 0, &d3);
  p2->t.dl_tensor.data = x;
  p3->t.dl_tensor.data = x;
  xrt_buffer *b1 = NULL, *b2 = NULL, *b3 = NULL;
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p1->t, &b1), XRT_OK);
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p2->t, &b2), XRT_OK);
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p3->t, &b3), XRT_OK);
  assert_ptr_equal(export_address(b1), x);
  assert_ptr_equal(export_address(b2), x);
  assert_ptr_not_equal(export_address(b3), x);
  assert_int_equal(d1, 0);
  assert_int_equal(d2, 0);
  assert_int_equal(d3, 1);
  xrt_buffer_release(b2);
  assert_int_equal(d2, 1);
  assert_host(b1, x, 32);
  assert_host(b3, x, 16);
  xrt_buffer_release(b3);
  xrt_buffer_release(b1);
  assert_int_equal(d1, 1);
}

/* Wrapped memory counts against the device's budget, like a copy. */
static void test_import_memory_budget(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 1024);
  xrt_device *dev = xrt_client_device(c, 0);
  int big_deleted = 0, deleted = 0;
  int64_t n512[1] = {512}, n128[1] = {128};
  prod *big = prod_new(dl_type(kDLFloat, 32), 1, n512, NULL, 2048, 0,
                       &big_deleted);
  xrt_buffer *b = NULL, *other = NULL;
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &big->t, &b),
                   XRT_RESOURCE_EXHAUSTED);
  assert_null(b);
  assert_int_equal(big_deleted, 0);
  big->t.deleter(&big->t);
  prod *p = prod_new(dl_type(kDLFloat, 32), 1, n128, NULL, 512, 0, &deleted);
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &b), XRT_OK);
  float junk[150] = {0};
  xrt_shape s = TU_SHAPE(XRT_F32, 150); /* 600 bytes: 512 + 600 > 1024 */
  assert_int_equal(xrt_buffer_from_host(c, dev, &s, junk, &other),
                   XRT_RESOURCE_EXHAUSTED);
  xrt_buffer_release(b);
  assert_int_equal(deleted, 1);
  assert_int_equal(xrt_buffer_from_host(c, dev, &s, junk, &other), XRT_OK);
  xrt_buffer_release(other);
  xrt_client_release(c);
}

/* Releasing the client frees zero-copy imports (their deleters run) and
 * the memory of exports: a deleter called afterwards is still safe. */
static void test_client_release_with_live_tensors(void **state) {
  (void)state;
  xrt_client *c = tu_client(1, 1, 0);
  xrt_device *dev = xrt_client_device(c, 0);
  int deleted = 0;
  int64_t n[1] = {16};
  prod *p = prod_new(dl_type(kDLUInt, 8), 1, n, NULL, 16, 0, &deleted);
  xrt_buffer *imp = NULL, *b = NULL;
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &imp), XRT_OK);
  uint8_t data[16] = {1, 2, 3};
  xrt_shape s = TU_SHAPE(XRT_U8, 16);
  assert_int_equal(xrt_buffer_from_host(c, dev, &s, data, &b), XRT_OK);
  DLManagedTensor *tb = NULL, *ti = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(b, &tb), XRT_OK);
  assert_int_equal(xrt_buffer_to_dlpack(imp, &ti), XRT_OK);
  xrt_buffer_release(b);
  xrt_buffer_release(imp); /* ti keeps it */
  assert_int_equal(deleted, 0);
  xrt_client_release(c);
  assert_int_equal(deleted, 1);
  tb->deleter(tb);
  ti->deleter(ti);
}

/* Malformed or unsupported tensors fail without calling the deleter. */
static void test_import_rejects(void **state) {
  xrt_client *c = (xrt_client *)*state;
  xrt_device *dev = xrt_client_device(c, 0);
  int deleted = 0;
  int64_t shape[17];
  for (int i = 0; i < 17; i++) shape[i] = 1;
  prod *p = prod_new(dl_type(kDLFloat, 32), 2, shape, NULL, 64, 0, &deleted);
  DLTensor *t = &p->t.dl_tensor;
  xrt_buffer *b = NULL;
#define EXPECT_FAIL(code, sub, ...)                                         \
  do {                                                                      \
    DLTensor saved = *t;                                                    \
    int64_t dims[2] = {p->shape[0], p->shape[1]};                           \
    __VA_ARGS__;                                                            \
    b = (xrt_buffer *)&b;                                                   \
    assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &b), (code));    \
    assert_null(b);                                                         \
    TU_ASSERT_CONTAINS(xrt_last_error(), (sub));                            \
    *t = saved;                                                             \
    p->shape[0] = dims[0];                                                  \
    p->shape[1] = dims[1];                                                  \
  } while (0)
  EXPECT_FAIL(XRT_UNIMPLEMENTED, "lanes", t->dtype.lanes = 4);
  EXPECT_FAIL(XRT_UNIMPLEMENTED, "code 3", t->dtype.code = kDLOpaqueHandle);
  EXPECT_FAIL(XRT_UNIMPLEMENTED, "8 bits", t->dtype.bits = 8);
  EXPECT_FAIL(XRT_UNIMPLEMENTED, "kDLCPU", t->device.device_type = kDLCUDA);
  EXPECT_FAIL(XRT_INVALID_ARGUMENT, "negative", p->shape[1] = -3);
  EXPECT_FAIL(XRT_INVALID_ARGUMENT, "ndim 17", t->ndim = 17);
  EXPECT_FAIL(XRT_INVALID_ARGUMENT, "ndim -1", t->ndim = -1);
  EXPECT_FAIL(XRT_INVALID_ARGUMENT, "data is NULL", t->data = NULL);
  EXPECT_FAIL(XRT_INVALID_ARGUMENT, "shape is NULL", t->shape = NULL);
  EXPECT_FAIL(XRT_INVALID_ARGUMENT, "byte_offset", t->byte_offset = UINT64_MAX);
  EXPECT_FAIL(XRT_INVALID_ARGUMENT, "out of range",
              t->strides = p->strides;
              p->strides[0] = INT64_MAX / 2; p->shape[0] = 3);
#undef EXPECT_FAIL
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, NULL, &b),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "tensor is NULL");
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, NULL),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_from_dlpack(NULL, dev, &p->t, &b),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_buffer_from_dlpack(c, NULL, &p->t, &b),
                   XRT_INVALID_ARGUMENT);
  xrt_client *c2 = tu_client(1, 1, 0);
  assert_int_equal(xrt_buffer_from_dlpack(c2, dev, &p->t, &b),
                   XRT_INVALID_ARGUMENT);
  xrt_client_release(c2);
  assert_int_equal(deleted, 0);
  /* the untouched tensor still imports */
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &b), XRT_OK);
  xrt_buffer_release(b);
  assert_int_equal(deleted, 1);
}

/* A plugin whose memory is not host-addressable and which cannot adopt
 * host memory (the simulator's table without those two entries): exports
 * copy into memory the tensor owns, imports copy and delete at once. */
static void test_plugin_without_host_memory(void **state) {
  (void)state;
  xrt_plugin_api api = *xrt_sim_plugin_api();
  api.buffer_host_pointer = NULL;
  api.buffer_wrap_host = NULL;
  xrt_context *x = NULL;
  assert_int_equal(xrt_context_create(NULL, &x), XRT_OK);
  assert_int_equal(xrt_context_register_plugin(x, "opaque", &api, NULL),
                   XRT_OK);
  xrt_client *c = tu_client_of(x, "opaque", 0);
  xrt_device *dev = xrt_client_device(c, 0);
  int16_t data[6] = {1, -2, 3, -4, 5, -6};
  xrt_shape s = TU_SHAPE(XRT_S16, 3, 2);
  xrt_buffer *b = NULL, *back = NULL;
  assert_int_equal(xrt_buffer_from_host(c, dev, &s, data, &b), XRT_OK);
  DLManagedTensor *t = NULL;
  assert_int_equal(xrt_buffer_to_dlpack(b, &t), XRT_OK);
  xrt_buffer_release(b); /* the copy does not depend on it */
  assert_memory_equal(t->dl_tensor.data, data, sizeof data);
  assert_int_equal(t->dl_tensor.shape[0], 3);
  t->deleter(t);
  int deleted = 0;
  int64_t shape[2] = {3, 2};
  prod *p = prod_new(dl_type(kDLInt, 16), 2, shape, NULL, 12, 0, &deleted);
  memcpy(p->t.dl_tensor.data, data, sizeof data);
  assert_int_equal(xrt_buffer_from_dlpack(c, dev, &p->t, &back), XRT_OK);
  assert_int_equal(deleted, 1);
  assert_host(back, data, sizeof data);
  xrt_buffer_release(back);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}

/* Threads importing (zero copy), exporting and releasing at once, on one
 * device: every deleter runs exactly once and every read sees its own
 * thread's data. */
enum { kThreads = 4, kRounds = 200 };

typedef struct worker {
  xrt_client *c;
  int id, deleted, bad;
} worker;

static void *exchange_loop(void *arg) {
  worker *w = (worker *)arg;
  xrt_device *dev = xrt_client_device(w->c, 0);
  int64_t n[1] = {64};
  for (int r = 0; r < kRounds; r++) {
    prod *p = prod_new(dl_type(kDLInt, 32), 1, n, NULL, 256, 0, &w->deleted);
    int32_t *x = (int32_t *)p->t.dl_tensor.data, got[64];
    for (int i = 0; i < 64; i++) x[i] = w->id * 100000 + r * 64 + i;
    xrt_buffer *b = NULL;
    DLManagedTensor *t = NULL;
    if (xrt_buffer_from_dlpack(w->c, dev, &p->t, &b) != XRT_OK ||
        xrt_buffer_to_dlpack(b, &t) != XRT_OK) {
      w->bad++;
      continue;
    }
    w->bad += t->dl_tensor.data != x;
    xrt_buffer_release(b);
    memcpy(got, t->dl_tensor.data, sizeof got);
    for (int i = 0; i < 64; i++) w->bad += got[i] != w->id * 100000 + r * 64 + i;
    t->deleter(t);
  }
  return NULL;
}

static void test_threads_exchange(void **state) {
  xrt_client *c = (xrt_client *)*state;
  pthread_t th[kThreads];
  worker w[kThreads];
  for (int i = 0; i < kThreads; i++) {
    w[i] = (worker){c, i, 0, 0};
    assert_int_equal(pthread_create(&th[i], NULL, exchange_loop, &w[i]), 0);
  }
  for (int i = 0; i < kThreads; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(w[i].bad, 0);
    assert_int_equal(w[i].deleted, kRounds);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_export_every_dtype),
      cmocka_unit_test(test_export_scalar_and_empty),
      cmocka_unit_test(test_export_zero_copy_lifetime),
      cmocka_unit_test(test_export_waits_and_poison),
      cmocka_unit_test(test_export_errors),
      cmocka_unit_test(test_import_zero_copy),
      cmocka_unit_test(test_import_then_export_keeps_memory),
      cmocka_unit_test(test_import_strided_copies),
      cmocka_unit_test(test_import_dense_strides_and_alignment),
      cmocka_unit_test(test_execute_on_imports),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_import_same_memory_twice),
      cmocka_unit_test(test_import_memory_budget),
      cmocka_unit_test(test_client_release_with_live_tensors),
      cmocka_unit_test(test_import_rejects),
      cmocka_unit_test(test_plugin_without_host_memory),
      cmocka_unit_test(test_threads_exchange),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
