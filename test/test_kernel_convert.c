/*
 * test_kernel_convert.c - the simulator's convert and bitcast_convert
 * kernels (src/sim/convert.c): every (source, destination) pair of the
 * element types other than the small floats (minifloat.c has those, see
 * test_kernel_minifloat.c), on values each pair holds exactly (so the
 * expected value is the value itself; floats to integers truncate toward
 * zero, anything to i1 is "not zero", complex to real keeps the real
 * part); and bitcast_convert by same-width copy, sub-byte re-extension,
 * whole bytes, and bit strings of sub-byte / i1 elements, checked against
 * bit patterns worked out by hand.
 */
#include "test_kernels.h"

#define C(state) ((xrt_client *)*(state))
enum { N = 8 };

/* Every element type but the small floats. */
static const xrt_dtype dts[] = {
    XRT_PRED, XRT_S2,  XRT_S4,  XRT_S8,  XRT_S16,  XRT_S32, XRT_S64,
    XRT_U2,   XRT_U4,  XRT_U8,  XRT_U16, XRT_U32,  XRT_U64, XRT_F16,
    XRT_BF16, XRT_F32, XRT_F64, XRT_C64, XRT_C128,
};

/* Whether type d holds value v exactly. */
static int holds(const tu_dtinfo *d, double v) {
  if (d->kind == TU_K_PRED) return v == 0 || v == 1;
  /* the values used are exact in every float */
  if (d->kind != TU_K_INT) return 1;
  if (v != floor(v)) return 0;
  double lo = d->is_signed ? -ldexp(1, d->bits - 1) : 0;
  double hi = d->is_signed ? ldexp(1, d->bits - 1) - 1 : ldexp(1, d->bits) - 1;
  return v >= lo && v <= hi;
}

static void test_convert_pairs(void **state) {
  const double pool[] = {0, 1, -1, 3, -2, 100, -100, 1000, 1.5, -2.75, 0.25};
  for (size_t s = 0; s < TU_COUNT(dts); s++)
    for (size_t r = 0; r < TU_COUNT(dts); r++) {
      const tu_dtinfo *a = tu_dt(dts[s]), *b = tu_dt(dts[r]);
      /* values both hold (fractions only into floats or toward zero) */
      double v[N];
      int nv = 0;
      for (size_t k = 0; k < TU_COUNT(pool) && nv < N; k++) {
        double x = pool[k], t = trunc(x);
        if (!holds(a, x)) continue;
        if (b->kind == TU_K_PRED || holds(b, x) ||
            (b->kind == TU_K_INT && holds(b, t)))
          v[nv++] = x;
      }
      while (nv < N) v[nv] = v[nv % 2], nv++;
      char in[N * 16], want[N * 16];
      for (int i = 0; i < N; i++) {
        tu_put(a, in, i, v[i], a->kind == TU_K_COMPLEX ? 3 : 0);
        double w = b->kind == TU_K_PRED  ? (v[i] != 0)
                   : b->kind != TU_K_INT ? v[i]
                                         : trunc(v[i]);
        tu_put(b, want, i, w,
               a->kind == TU_K_COMPLEX && b->kind == TU_K_COMPLEX ? 3 : 0);
      }
      char prog[512];
      snprintf(prog, sizeof prog,
               "func.func @main(%%a: tensor<%dx%s>) -> tensor<%dx%s> {\n"
               "  %%0 = stablehlo.convert %%a : (tensor<%dx%s>) -> tensor<%dx%s>\n"
               "  func.return %%0 : tensor<%dx%s>\n}\n",
               N, a->mlir, N, b->mlir, N, a->mlir, N, b->mlir, N, b->mlir);
      tu_in ti = {TU_SHAPE(a->dt, N), in};
      tu_out o;
      xrt_status st = tu_run(C(state), prog, 1, &ti, &o);
      if (st != XRT_OK)
        fail_msg("%s -> %s: %s: %s", a->mlir, b->mlir, xrt_strerror(st), tu_msg);
      assert_int_equal(o.bytes[0], N * b->size);
      for (int i = 0; i < N; i++)
        if (memcmp((char *)o.data[0] + i * b->size, want + i * b->size,
                   b->size) != 0)
          fail_msg("%s -> %s [%d] (%g) differs", a->mlir, b->mlir, i, v[i]);
      tu_out_free(&o);
    }
}

/* Runs a one-op bitcast program and compares the output bytes. */
static void bitcast(xrt_client *c, const char *from, const char *to,
                    tu_in in, const void *want, size_t nwant) {
  char prog[512];
  snprintf(prog, sizeof prog,
           "func.func @main(%%a: %s) -> %s {\n"
           "  %%0 = stablehlo.bitcast_convert %%a : (%s) -> %s\n"
           "  func.return %%0 : %s\n}\n",
           from, to, from, to, to);
  tu_out o;
  xrt_status st = tu_run(c, prog, 1, &in, &o);
  if (st != XRT_OK)
    fail_msg("%s -> %s: %s: %s", from, to, xrt_strerror(st), tu_msg);
  assert_int_equal(o.bytes[0], nwant);
  assert_memory_equal(o.data[0], want, nwant);
  tu_out_free(&o);
}

static void test_bitcast(void **state) {
  /* same width: bytes as they are */
  const float f[2] = {1.0f, -2.0f};
  const uint32_t fu[2] = {0x3f800000u, 0xc0000000u};
  bitcast(C(state), "tensor<2xf32>", "tensor<2xui32>",
          (tu_in){TU_SHAPE(XRT_F32, 2), f}, fu, sizeof fu);
  /* wider to narrower whole bytes: little-endian */
  const int32_t w[2] = {0x04030201, -1};
  const int8_t wb[8] = {1, 2, 3, 4, -1, -1, -1, -1};
  bitcast(C(state), "tensor<2xi32>", "tensor<2x4xi8>",
          (tu_in){TU_SHAPE(XRT_S32, 2), w}, wb, sizeof wb);
  const uint8_t nb[8] = {0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0x7f};
  const int64_t nw[1] = {0x7fffffff04030201ll};
  bitcast(C(state), "tensor<8xui8>", "tensor<i64>",
          (tu_in){TU_SHAPE(XRT_U8, 8), nb}, nw, sizeof nw);
  /* sub-byte, same width: the low bits re-extended */
  const int8_t s4[4] = {-1, -8, 7, 0};
  const uint8_t u4[4] = {15, 8, 7, 0};
  bitcast(C(state), "tensor<4xi4>", "tensor<4xui4>",
          (tu_in){TU_SHAPE(XRT_S4, 4), s4}, u4, sizeof u4);
  const uint8_t u2[2] = {3, 2};
  const int8_t s2[2] = {-1, -2};
  bitcast(C(state), "tensor<2xui2>", "tensor<2xi2>",
          (tu_in){TU_SHAPE(XRT_U2, 2), u2}, s2, sizeof s2);
  /* sub-byte to bytes: element 0 in the low bits */
  const int8_t p4[6] = {1, 2, -1, 7, 0, -8};
  const int8_t p8[3] = {0x21, 0x7f, (int8_t)0x80};
  bitcast(C(state), "tensor<3x2xi4>", "tensor<3xi8>",
          (tu_in){TU_SHAPE(XRT_S4, 3, 2), p4}, p8, sizeof p8);
  /* bytes to sub-byte */
  const uint8_t q8[2] = {0x21, 0xf0};
  const uint8_t q4[4] = {1, 2, 0, 15};
  bitcast(C(state), "tensor<2xui8>", "tensor<2x2xui4>",
          (tu_in){TU_SHAPE(XRT_U8, 2), q8}, q4, sizeof q4);
  const int8_t q4s[4] = {1, 2, 0, -1};
  bitcast(C(state), "tensor<2xui8>", "tensor<2x2xi4>",
          (tu_in){TU_SHAPE(XRT_U8, 2), q8}, q4s, sizeof q4s);
  /* 2-bit to 4-bit elements */
  const uint8_t b2[4] = {1, 2, 3, 0};
  const int8_t b4[2] = {-7, 3}; /* 0b1001 = -7, 0b0011 = 3 */
  bitcast(C(state), "tensor<2x2xui2>", "tensor<2xi4>",
          (tu_in){TU_SHAPE(XRT_U2, 2, 2), b2}, b4, sizeof b4);
}

TU_MAIN(tu_setup_client, tu_teardown_client,
        cmocka_unit_test(test_convert_pairs), cmocka_unit_test(test_bitcast))
