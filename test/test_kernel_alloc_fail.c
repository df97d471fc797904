/*
 * test_kernel_alloc_fail.c - allocation failures while the simulator
 * builds the kernels that need memory of their own at compile time: the
 * small-float contexts (arithmetic, compare, convert), the quantized
 * kernel, reduce_precision, a bitcast between sub-byte and byte elements,
 * and a packed GEMM.
 *
 * The client's allocator (test_util.h's counting allocator) fails its
 * Nth allocation after the client exists, for N = 1, 2, ... until compile
 * and execute complete without reaching N.  Each attempt must succeed with
 * the right values or fail with XRT_RESOURCE_EXHAUSTED, and once the
 * client is released the allocator must hold no block (the client keeps
 * some structures, such as handle slots, between attempts, so blocks are
 * counted at the end, as in test_alloc_fail.c).  The expected values are
 * worked out by hand.
 */
#include "test_util.h"

#define Q "tensor<4x!quant.uniform<i8:f32, 0.5:0>>"

static const char *kProg =
    "func.func @main(%a: tensor<4xf8E4M3FN>, %b: tensor<4xf32>, %c: tensor<4xi8>, %m: tensor<16x16xf32>) -> "
    "(tensor<4xf8E4M3FN>, tensor<4xi1>, tensor<4xf8E4M3FN>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xi4>, tensor<16x16xf32>) {\n"
    "  %0 = stablehlo.add %a, %a : tensor<4xf8E4M3FN>\n"
    "  %1 = stablehlo.compare LT, %a, %a, FLOAT : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xi1>\n"
    "  %2 = stablehlo.convert %b : (tensor<4xf32>) -> tensor<4xf8E4M3FN>\n"
    "  %q = stablehlo.uniform_quantize %b : (tensor<4xf32>) -> " Q "\n"
    "  %3 = stablehlo.uniform_dequantize %q : (" Q ") -> tensor<4xf32>\n"
    "  %4 = stablehlo.reduce_precision %b, format = e5m2 : tensor<4xf32>\n"
    "  %5 = stablehlo.bitcast_convert %c : (tensor<4xi8>) -> tensor<4x2xi4>\n"
    "  %6 = stablehlo.dot_general %m, %m, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>\n"
    "  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf8E4M3FN>, tensor<4xi1>, tensor<4xf8E4M3FN>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xi4>, tensor<16x16xf32>\n"
    "}\n";

/* Checks a successful run's outputs. */
static void check(const tu_out *o) {
  /* f8E4M3FN {1, 2, 0.5, -1} doubled: {2, 4, 1, -2} */
  TU_ASSERT_OUT(o, 0, uint8_t, 0x40, 0x48, 0x38, 0xc0);
  TU_ASSERT_OUT(o, 1, uint8_t, 0, 0, 0, 0);
  /* {1, 2.5, -3, 0.1}: 0.1 = 1.6 * 2^-4 rounds to 1.625 * 2^-4 (0x1d) */
  TU_ASSERT_OUT(o, 2, uint8_t, 0x38, 0x42, 0xc4, 0x1d);
  /* scale 0.5: 0.1 / 0.5 = 0.2 rounds to 0 */
  TU_ASSERT_OUT(o, 3, float, 1, 2.5f, -3, 0);
  /* two mantissa bits: 0.1 -> 1.5 * 2^-4 */
  TU_ASSERT_OUT(o, 4, float, 1, 2.5f, -3, 0.09375f);
  /* 0x21 0x7f 0x80 0x00, low nibble first */
  TU_ASSERT_OUT(o, 5, int8_t, 1, 2, -1, 7, 0, -8, 0, 0);
  /* all ones: every element 16 */
  assert_int_equal(o->bytes[6], 256 * sizeof(float));
  for (int i = 0; i < 256; i++)
    assert_true(((const float *)o->data[6])[i] == 16.0f);
}

static void test_kernel_contexts_alloc_fail(void **state) {
  (void)state;
  static tu_counting_alloc ca;
  tu_counting_init(&ca, 0);
  xrt_client_options opt;
  xrt_client_options_init(&opt);
  opt.allocator = tu_counting_allocator(&ca);
  opt.compile_cache_bytes = 0;
  opt.num_devices = 1;
  opt.threads_per_device = 1;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&opt, &c), XRT_OK);
  const uint8_t a[4] = {0x38, 0x40, 0x30, 0xb8};
  const float b[4] = {1, 2.5f, -3, 0.1f};
  const int8_t ci[4] = {0x21, 0x7f, (int8_t)0x80, 0};
  float m[256];
  for (int i = 0; i < 256; i++) m[i] = 1;
  tu_in in[4] = {{TU_SHAPE(XRT_F8E4M3FN, 4), a},
                 {TU_SHAPE(XRT_F32, 4), b},
                 {TU_SHAPE(XRT_S8, 4), ci},
                 {TU_SHAPE(XRT_F32, 16, 16), m}};
  int done = 0, failures = 0;
  for (long n = 1; !done && n < 100000; n++) {
    atomic_store(&ca.failed, false);
    ca.fail_at = atomic_load(&ca.calls) + n;
    tu_out o;
    xrt_status st = tu_run(c, kProg, 4, in, &o);
    ca.fail_at = 0;
    if (st == XRT_OK) {
      check(&o);
      tu_out_free(&o);
      done = !atomic_load(&ca.failed);
    } else {
      if (st != XRT_RESOURCE_EXHAUSTED)
        fail_msg("allocation %ld: %s: %s", n, xrt_strerror(st), tu_msg);
      failures++;
    }
  }
  assert_true(done);
  assert_true(failures > 10);
  xrt_client_release(c);
  assert_int_equal(atomic_load(&ca.live), 0);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_kernel_contexts_alloc_fail))
