/* test_ops_misc.c - assorted op tests on hand-computed values: clamp on
 * the f8/f6/f4 families (bit patterns worked out by hand from each
 * format's layout) and the pretty form of chlo.scan. */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))
#define IN(dt, data, ...) ((tu_in){TU_SHAPE((dt), __VA_ARGS__), (data)})
#define IN0(dt, data) ((tu_in){TU_SCALAR(dt), (data)})

/* ---- clamp on small floats ---- */

static void test_clamp_f8e4m3fn(void **state) {
  /* f8E4M3FN: s eeee mmm, bias 7, no infinity, NaN = s.1111.111.
   * 0xC0 = -2, 0xB8 = -1, 0x30 = 0.5, 0x38 = 1, 0x3C = 1.5, 0x40 = 2,
   * 0x44 = 3, 0x7E = 448, 0x7F / 0xFF = NaN, 0x00 = +0, 0x80 = -0. */
  const char *prog =
      "func.func @main(%lo: tensor<9xf8E4M3FN>, %x: tensor<9xf8E4M3FN>,\n"
      "                %hi: tensor<9xf8E4M3FN>) -> tensor<9xf8E4M3FN> {\n"
      "  %r = stablehlo.clamp %lo, %x, %hi : tensor<9xf8E4M3FN>\n"
      "  func.return %r : tensor<9xf8E4M3FN>\n}\n";
  const uint8_t lo[9] = {0xB8, 0xB8, 0xB8, 0xB8, 0x7F, 0x00, 0xB8, 0xB8, 0xB8};
  const uint8_t x[9] = {0xC0, 0x30, 0x44, 0x7F, 0x3C, 0x80, 0x00, 0x38, 0x7E};
  const uint8_t hi[9] = {0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x80, 0xFF, 0x7E};
  tu_in in[3] = {IN(XRT_F8E4M3FN, lo, 9), IN(XRT_F8E4M3FN, x, 9),
                 IN(XRT_F8E4M3FN, hi, 9)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 3, in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F8E4M3FN, 9));
  /* -2 -> -1; 0.5 stays; 3 -> 2; NaN x stays; NaN lo wins; max(-0, +0) =
   * +0; min(+0, -0) = -0; NaN hi wins; 448 at the bound stays. */
  TU_ASSERT_OUT(&o, 0, uint8_t, 0xB8, 0x30, 0x40, 0x7F, 0x7F, 0x00, 0x80,
                0xFF, 0x7E);
  tu_out_free(&o);
}

static void test_clamp_f8e5m2_scalar_bounds(void **state) {
  /* f8E5M2: s eeeee mm, bias 15, IEEE infinities and NaNs.
   * 0xBC = -1, 0x3E = 1.5, 0x38 = 0.5, 0x40 = 2, 0xC4 = -4, 0x7C = inf,
   * 0xFC = -inf, 0x7E / 0xFE = NaN, 0x80 = -0. */
  const char *prog =
      "func.func @main(%lo: tensor<f8E5M2>, %x: tensor<9xf8E5M2>,\n"
      "                %hi: tensor<f8E5M2>) -> tensor<9xf8E5M2> {\n"
      "  %r = stablehlo.clamp %lo, %x, %hi : (tensor<f8E5M2>, "
      "tensor<9xf8E5M2>, tensor<f8E5M2>) -> tensor<9xf8E5M2>\n"
      "  func.return %r : tensor<9xf8E5M2>\n}\n";
  const uint8_t lo = 0xBC, hi = 0x3E;
  const uint8_t x[9] = {0xFC, 0x7C, 0x7E, 0xFE, 0x38, 0x40, 0xC4, 0x3E, 0x80};
  tu_in in[3] = {IN0(XRT_F8E5M2, &lo), IN(XRT_F8E5M2, x, 9),
                 IN0(XRT_F8E5M2, &hi)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 3, in, &o);
  tu_assert_shape(&o, 0, TU_SHAPE(XRT_F8E5M2, 9));
  TU_ASSERT_OUT(&o, 0, uint8_t, 0xBC, 0x3E, 0x7E, 0xFE, 0x38, 0x3E, 0xBC,
                0x3E, 0x80);
  tu_out_free(&o);

  /* A NaN bound makes every element NaN (the bound's bit pattern). */
  const uint8_t nan = 0x7F;
  tu_in in2[3] = {IN0(XRT_F8E5M2, &lo), IN(XRT_F8E5M2, x, 9),
                  IN0(XRT_F8E5M2, &nan)};
  TU_RUN_OK(C(state), prog, 3, in2, &o);
  /* NaN x stays itself; everything else takes hi's NaN. */
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x7F, 0x7F, 0x7E, 0xFE, 0x7F, 0x7F, 0x7F,
                0x7F, 0x7F);
  tu_out_free(&o);
}

static void test_clamp_f4e2m1fn_rank0(void **state) {
  /* f4E2M1FN in the low 4 bits: s ee m, bias 1, finite only.
   * 0x2 = 1, 0x5 = 3, 0x7 = 6, 0xA = -1, 0xF = -6. */
  const char *prog =
      "func.func @main(%lo: tensor<f4E2M1FN>, %x: tensor<f4E2M1FN>,\n"
      "                %hi: tensor<f4E2M1FN>) -> tensor<f4E2M1FN> {\n"
      "  %r = stablehlo.clamp %lo, %x, %hi : tensor<f4E2M1FN>\n"
      "  func.return %r : tensor<f4E2M1FN>\n}\n";
  const uint8_t lo = 0xA, hi = 0x5, xs[3] = {0xF, 0x7, 0x2},
                want[3] = {0xA, 0x5, 0x2};
  for (int i = 0; i < 3; i++) {
    tu_in in[3] = {IN0(XRT_F4E2M1FN, &lo), IN0(XRT_F4E2M1FN, &xs[i]),
                   IN0(XRT_F4E2M1FN, &hi)};
    tu_out o;
    TU_RUN_OK(C(state), prog, 3, in, &o);
    assert_int_equal(o.bytes[0], 1);
    assert_int_equal(((const uint8_t *)o.data[0])[0], want[i]);
    tu_out_free(&o);
  }
}

/* ---- chlo.scan, pretty form ---- */

static void test_scan_pretty_cumsum(void **state) {
  const char *prog =
      "func.func @main(%x: tensor<5xi32>, %i: tensor<i32>)\n"
      "    -> (tensor<5xi32>, tensor<i32>) {\n"
      "  %0:2 = chlo.scan(%x) inits(%i) dimension=0 {\n"
      "  ^bb0(%a: tensor<i32>, %c: tensor<i32>):\n"
      "    %s = stablehlo.add %a, %c : tensor<i32>\n"
      "    stablehlo.return %s, %s : tensor<i32>, tensor<i32>\n"
      "  } : (tensor<5xi32>, tensor<i32>) -> (tensor<5xi32>, tensor<i32>)\n"
      "  func.return %0#0, %0#1 : tensor<5xi32>, tensor<i32>\n}\n";
  const int32_t x[5] = {3, -1, 4, 1, -5}, init = 10;
  tu_in in[2] = {IN(XRT_S32, x, 5), IN0(XRT_S32, &init)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 13, 12, 16, 17, 12);
  TU_ASSERT_OUT(&o, 1, int32_t, 12);
  tu_out_free(&o);
}

static void test_scan_pretty_reverse_dim1(void **state) {
  const char *prog =
      "func.func @main(%x: tensor<2x3xf32>, %i: tensor<2xf32>)\n"
      "    -> (tensor<2x3xf32>, tensor<2xf32>) {\n"
      "  %0:2 = chlo.scan(%x) inits(%i) dimension = 1 "
      "attributes {is_reverse = true} {\n"
      "  ^bb0(%a: tensor<2xf32>, %c: tensor<2xf32>):\n"
      "    %s = stablehlo.add %a, %c : tensor<2xf32>\n"
      "    stablehlo.return %s, %s : tensor<2xf32>, tensor<2xf32>\n"
      "  } : (tensor<2x3xf32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2xf32>)\n"
      "  func.return %0#0, %0#1 : tensor<2x3xf32>, tensor<2xf32>\n}\n";
  const float x[6] = {1, 2, 3, 4, 5, 6}, init[2] = {0.5f, -1};
  tu_in in[2] = {IN(XRT_F32, x, 2, 3), IN(XRT_F32, init, 2)};
  tu_out o;
  TU_RUN_OK(C(state), prog, 2, in, &o);
  /* suffix sums plus the init: row 0 3.5, 5.5, 6.5; row 1 5, 10, 14 */
  TU_ASSERT_OUT(&o, 0, float, 6.5f, 5.5f, 3.5f, 14, 10, 5);
  TU_ASSERT_OUT(&o, 1, float, 6.5f, 14);
  tu_out_free(&o);
}

/* The pretty form parses to the generic form's op: same operands, region
 * and attributes, with operandSegmentSizes = [inputs, inits]. */
static void test_scan_pretty_matches_generic(void **state) {
  (void)state;
  const char *prog =
      "func.func @main(%x: tensor<4xi32>, %y: tensor<4xi32>, %i: tensor<i32>,\n"
      "                %j: tensor<i32>, %k: tensor<i32>) {\n"
      "  %0:5 = chlo.scan(%x, %y) inits(%i, %j, %k) dimension=0 {\n"
      "  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>,"
      " %d: tensor<i32>, %e: tensor<i32>):\n"
      "    stablehlo.return %a, %b, %c, %d, %e : tensor<i32>, tensor<i32>,"
      " tensor<i32>, tensor<i32>, tensor<i32>\n"
      "  } : (tensor<4xi32>, tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<i32>)"
      " -> (tensor<4xi32>, tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<i32>)\n"
      "  %1:5 = \"chlo.scan\"(%x, %y, %i, %j, %k) <{dimension = 0 : i64,"
      " operandSegmentSizes = array<i32: 2, 3>}> ({\n"
      "  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>,"
      " %d: tensor<i32>, %e: tensor<i32>):\n"
      "    \"stablehlo.return\"(%a, %b, %c, %d, %e) : (tensor<i32>, tensor<i32>,"
      " tensor<i32>, tensor<i32>, tensor<i32>) -> ()\n"
      "  }) : (tensor<4xi32>, tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<i32>)"
      " -> (tensor<4xi32>, tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<i32>)\n"
      "  func.return\n}\n";
  xrt_program *p = NULL;
  xrt_status st = xrt_program_parse(prog, strlen(prog), NULL, &p);
  if (st != XRT_OK) fail_msg("parse failed: %s", xrt_last_error());
  const xrt_ir_module *m = xrt_program_module(p);
  assert_int_equal(m->num_funcs, 1);
  const xrt_ir_region *body = &m->funcs[0].body;
  assert_int_equal(body->num_ops, 3);
  const xrt_ir_op *a = &body->ops[0], *g = &body->ops[1];
  assert_int_equal(a->code, XRT_OP_CHLO_SCAN);
  assert_int_equal(g->code, XRT_OP_CHLO_SCAN);
  assert_int_equal(a->num_operands, 5);
  assert_int_equal(g->num_operands, 5);
  for (int i = 0; i < 5; i++) assert_int_equal(a->operands[i], g->operands[i]);
  assert_int_equal(a->num_results, 5);
  assert_int_equal(a->num_regions, 1);
  assert_int_equal(g->num_regions, 1);
  assert_int_equal(a->regions[0].num_args, 5);
  assert_int_equal(a->regions[0].num_ops, 1);
  const xrt_ir_op *both[2] = {a, g};
  for (int k = 0; k < 2; k++) {
    const xrt_ir_attr *d = xrt_ir_op_attr(both[k], "dimension");
    assert_non_null(d);
    assert_int_equal(d->kind, XRT_ATTR_INT);
    assert_int_equal(d->i, 0);
    const xrt_ir_attr *seg = xrt_ir_op_attr(both[k], "operandSegmentSizes");
    assert_non_null(seg);
    assert_int_equal(seg->kind, XRT_ATTR_INTS);
    assert_int_equal(seg->n, 2);
    assert_int_equal(seg->ints[0], 2);
    assert_int_equal(seg->ints[1], 3);
  }
  xrt_program_release(p);
}

static void test_scan_pretty_errors(void **state) {
  (void)state;
  const char *bad[] = {
      /* no inits(...) */
      "func.func @main(%x: tensor<4xi32>, %i: tensor<i32>) {\n"
      "  %0:2 = chlo.scan(%x) (%i) dimension=0 {\n"
      "  ^bb0(%a: tensor<i32>, %c: tensor<i32>):\n"
      "    stablehlo.return %a, %c : tensor<i32>, tensor<i32>\n"
      "  } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)\n"
      "  func.return\n}\n",
      /* a dimension that is no integer */
      "func.func @main(%x: tensor<4xi32>, %i: tensor<i32>) {\n"
      "  %0:2 = chlo.scan(%x) inits(%i) dimension=\"a\" {\n"
      "  ^bb0(%a: tensor<i32>, %c: tensor<i32>):\n"
      "    stablehlo.return %a, %c : tensor<i32>, tensor<i32>\n"
      "  } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)\n"
      "  func.return\n}\n",
      /* the type lists one operand too few */
      "func.func @main(%x: tensor<4xi32>, %i: tensor<i32>) {\n"
      "  %0:2 = chlo.scan(%x) inits(%i) dimension=0 {\n"
      "  ^bb0(%a: tensor<i32>, %c: tensor<i32>):\n"
      "    stablehlo.return %a, %c : tensor<i32>, tensor<i32>\n"
      "  } : (tensor<4xi32>) -> (tensor<4xi32>, tensor<i32>)\n"
      "  func.return\n}\n",
  };
  const char *want[] = {"2:24: expected", "2:44: expected an integer",
                        "5:7: op 'chlo.scan' has 2 operands"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    xrt_program *p = NULL;
    xrt_status st = xrt_program_parse(bad[i], strlen(bad[i]), NULL, &p);
    if (st == XRT_OK) {
      xrt_program_release(p);
      fail_msg("program %zu parsed", i);
    }
    TU_ASSERT_CONTAINS(xrt_last_error(), want[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_clamp_f8e4m3fn),
      cmocka_unit_test(test_clamp_f8e5m2_scalar_bounds),
      cmocka_unit_test(test_clamp_f4e2m1fn_rank0),
      cmocka_unit_test(test_scan_pretty_cumsum),
      cmocka_unit_test(test_scan_pretty_reverse_dim1),
      cmocka_unit_test(test_scan_pretty_matches_generic),
      cmocka_unit_test(test_scan_pretty_errors),
  };
  return cmocka_run_group_tests(tests, tu_setup_client, tu_teardown_client);
}
