/*
 * test_refine_fold.c - constant folding during shape refinement
 * (src/core/refine_fold.c): the integer arithmetic JAX emits around its
 * dimension variables.  Each case computes a size from d, the length of a
 * `?` argument given as 7, through one kind of op (division and remainder,
 * signed and unsigned, abs, sign, not, min/max, logic on pred, clamp,
 * select, every comparison, broadcast_in_dim, slice with strides, iota,
 * narrowing converts), and uses it as the length of a dynamic_iota: the
 * executable's output length is the folded value, computed here by hand.
 * What must not fold (division by zero, INT_MIN / -1) leaves the size
 * unknown, which refinement refuses.
 */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))

/* @main(x: [?]) with d = len(x) as tensor<i64>, then body computing %v:
 * tensor<i64>, the size of the result. */
static char *fold_program(const char *body) {
  static const char head[] =
      "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
      "  %d32 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>\n"
      "  %d = stablehlo.convert %d32 : (tensor<i32>) -> tensor<i64>\n";
  static const char tail[] =
      "  %s = stablehlo.reshape %v : (tensor<i64>) -> tensor<1xi64>\n"
      "  %r = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<?xf32>\n"
      "  return %r : tensor<?xf32>\n}\n";
  size_t n = sizeof head + strlen(body) + sizeof tail;
  char *t = malloc(n);
  snprintf(t, n, "%s%s%s", head, body, tail);
  return t;
}

/* The folded size, or -1 with the message in tu_msg when refused. */
static int64_t fold_size(xrt_client *c, const char *body) {
  char *t = fold_program(body);
  xrt_shape in[1] = {TU_SHAPE(XRT_F32, 7)};
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "fold.mlir";
  o.num_arg_shapes = 1;
  o.arg_shapes = in;
  o.cache_disable = 1;
  xrt_executable *exe = NULL;
  xrt_status s = xrt_compile(c, t, strlen(t), &o, &exe);
  free(t);
  if (s) {
    tu_save_error();
    return -1;
  }
  xrt_shape out;
  assert_int_equal(xrt_executable_output_shape(exe, 0, &out), XRT_OK);
  assert_int_equal(out.rank, 1);
  xrt_executable_release(exe);
  return out.dims[0];
}

#define K(v, name) "  %" name " = stablehlo.constant dense<" #v "> : tensor<i64>\n"

static const struct {
  const char *body;
  int64_t want;
} k_folds[] = {
    /* signed division and remainder: 7 / 2 = 3, 7 % 4 = 3, -7 / 2 = -3
     * (toward zero) so 10 + -3 = 7, -7 % 4 = -3 so 10 + -3 = 7 */
    {K(2, "two") "  %v = stablehlo.divide %d, %two : tensor<i64>\n", 3},
    {K(4, "four") "  %v = stablehlo.remainder %d, %four : tensor<i64>\n", 3},
    {K(2, "two") K(10, "ten")
     "  %n = stablehlo.negate %d : tensor<i64>\n"
     "  %q = stablehlo.divide %n, %two : tensor<i64>\n"
     "  %v = stablehlo.add %ten, %q : tensor<i64>\n", 7},
    {K(4, "four") K(10, "ten")
     "  %n = stablehlo.negate %d : tensor<i64>\n"
     "  %q = stablehlo.remainder %n, %four : tensor<i64>\n"
     "  %v = stablehlo.add %ten, %q : tensor<i64>\n", 7},
    /* unsigned: (7 - 9) as ui64 is 2^64 - 2; / 2^62 = 3; % 5 of 2^64-2:
     * 2^64 = 1 mod 5, so 2^64 - 2 = 4 mod 5 */
    {"  %u = stablehlo.convert %d : (tensor<i64>) -> tensor<ui64>\n"
     "  %nine = stablehlo.constant dense<9> : tensor<ui64>\n"
     "  %m = stablehlo.subtract %u, %nine : tensor<ui64>\n"
     "  %p = stablehlo.constant dense<4611686018427387904> : tensor<ui64>\n"
     "  %q = stablehlo.divide %m, %p : tensor<ui64>\n"
     "  %v = stablehlo.convert %q : (tensor<ui64>) -> tensor<i64>\n", 3},
    {"  %u = stablehlo.convert %d : (tensor<i64>) -> tensor<ui64>\n"
     "  %nine = stablehlo.constant dense<9> : tensor<ui64>\n"
     "  %m = stablehlo.subtract %u, %nine : tensor<ui64>\n"
     "  %five = stablehlo.constant dense<5> : tensor<ui64>\n"
     "  %q = stablehlo.remainder %m, %five : tensor<ui64>\n"
     "  %v = stablehlo.convert %q : (tensor<ui64>) -> tensor<i64>\n", 4},
    /* unsigned max/min: 2^64 - 2 is the larger */
    {"  %u = stablehlo.convert %d : (tensor<i64>) -> tensor<ui64>\n"
     "  %nine = stablehlo.constant dense<9> : tensor<ui64>\n"
     "  %m = stablehlo.subtract %u, %nine : tensor<ui64>\n"
     "  %q = stablehlo.minimum %m, %u : tensor<ui64>\n"
     "  %v = stablehlo.convert %q : (tensor<ui64>) -> tensor<i64>\n", 7},
    /* abs, sign, not: |-7| = 7; sign(7) + 4 = 5; ~~7 = 7; ~(-8) = 7 */
    {"  %n = stablehlo.negate %d : tensor<i64>\n"
     "  %v = stablehlo.abs %n : tensor<i64>\n", 7},
    {K(4, "four")
     "  %g = stablehlo.sign %d : tensor<i64>\n"
     "  %v = stablehlo.add %g, %four : tensor<i64>\n", 5},
    {K(-8, "m8") "  %v = stablehlo.not %m8 : tensor<i64>\n", 7},
    {"  %a = stablehlo.not %d : tensor<i64>\n"
     "  %v = stablehlo.not %a : tensor<i64>\n", 7},
    /* max/min signed */
    {K(-3, "m3") "  %v = stablehlo.maximum %d, %m3 : tensor<i64>\n", 7},
    {K(5, "five") "  %v = stablehlo.minimum %d, %five : tensor<i64>\n", 5},
    /* logic on i64: 7 & 12 = 4, 7 | 8 = 15, 7 ^ 5 = 2 */
    {K(12, "c") "  %v = stablehlo.and %d, %c : tensor<i64>\n", 4},
    {K(8, "c") "  %v = stablehlo.or %d, %c : tensor<i64>\n", 15},
    {K(5, "c") "  %v = stablehlo.xor %d, %c : tensor<i64>\n", 2},
    /* pred logic: (d > 5) and not (d > 9), or, xor, max, min -> select */
    {K(5, "five") K(9, "nine") K(11, "yes") K(1, "no")
     "  %a = stablehlo.compare GT, %d, %five : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "  %b = stablehlo.compare GT, %d, %nine : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "  %nb = stablehlo.not %b : tensor<i1>\n"
     "  %c = stablehlo.and %a, %nb : tensor<i1>\n"
     "  %e = stablehlo.xor %c, %b : tensor<i1>\n"
     "  %f = stablehlo.or %e, %b : tensor<i1>\n"
     "  %g = stablehlo.maximum %f, %b : tensor<i1>\n"
     "  %h = stablehlo.minimum %g, %a : tensor<i1>\n"
     "  %v = stablehlo.select %h, %yes, %no : tensor<i1>, tensor<i64>\n", 11},
    /* every comparison, summed: 7 vs 7: EQ LE GE true, NE LT GT false;
     * 1 + 2 + 4 = 7 weighted by position */
    {K(7, "sv") K(0, "z") K(1, "w1") K(2, "w2") K(4, "w4") K(8, "w8") K(16, "w16") K(32, "w32")
     "  %c1 = stablehlo.compare EQ, %d, %sv : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "  %c2 = stablehlo.compare NE, %d, %sv : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "  %c3 = stablehlo.compare LT, %d, %sv : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "  %c4 = stablehlo.compare LE, %d, %sv : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "  %c5 = stablehlo.compare GT, %d, %sv : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "  %c6 = stablehlo.compare GE, %d, %sv : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "  %e1 = stablehlo.select %c1, %w1, %z : tensor<i1>, tensor<i64>\n"
     "  %e2 = stablehlo.select %c2, %w2, %z : tensor<i1>, tensor<i64>\n"
     "  %e3 = stablehlo.select %c3, %w4, %z : tensor<i1>, tensor<i64>\n"
     "  %e4 = stablehlo.select %c4, %w8, %z : tensor<i1>, tensor<i64>\n"
     "  %e5 = stablehlo.select %c5, %w16, %z : tensor<i1>, tensor<i64>\n"
     "  %e6 = stablehlo.select %c6, %w32, %z : tensor<i1>, tensor<i64>\n"
     "  %a1 = stablehlo.add %e1, %e2 : tensor<i64>\n"
     "  %a2 = stablehlo.add %a1, %e3 : tensor<i64>\n"
     "  %a3 = stablehlo.add %a2, %e4 : tensor<i64>\n"
     "  %a4 = stablehlo.add %a3, %e5 : tensor<i64>\n"
     "  %v = stablehlo.add %a4, %e6 : tensor<i64>\n", 1 + 8 + 32},
    /* unsigned comparison: 2^64 - 2 > 7 as ui64 (as i64 it is -2 < 7) */
    {K(3, "yes") K(2, "no")
     "  %u = stablehlo.convert %d : (tensor<i64>) -> tensor<ui64>\n"
     "  %nine = stablehlo.constant dense<9> : tensor<ui64>\n"
     "  %m = stablehlo.subtract %u, %nine : tensor<ui64>\n"
     "  %c = stablehlo.compare GT, %m, %u, UNSIGNED : (tensor<ui64>, tensor<ui64>) -> tensor<i1>\n"
     "  %v = stablehlo.select %c, %yes, %no : tensor<i1>, tensor<i64>\n", 3},
    /* clamp: 2 <= 7 <= 5 -> 5; 9 <= 7 -> 9 (min above max: min) */
    {K(2, "lo") K(5, "hi") "  %v = stablehlo.clamp %lo, %d, %hi : tensor<i64>\n", 5},
    {K(9, "lo") K(12, "hi") "  %v = stablehlo.clamp %lo, %d, %hi : tensor<i64>\n", 9},
    /* broadcast d to [3], iota [3] added, slice [2:3], reshape: 7 + 2 */
    {"  %b = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<i64>) -> tensor<3xi64>\n"
     "  %i = stablehlo.iota dim = 0 : tensor<3xi64>\n"
     "  %a = stablehlo.add %b, %i : tensor<3xi64>\n"
     "  %s2 = stablehlo.slice %a [2:3] : (tensor<3xi64>) -> tensor<1xi64>\n"
     "  %v = stablehlo.reshape %s2 : (tensor<1xi64>) -> tensor<i64>\n", 9},
    /* a 2-d iota along dim 1, broadcast [1, 3] -> [2, 3], strided slice
     * [1:2, 0:3:2]: row 1 columns 0 and 2 of (d + col): 7 + 2 = 9 */
    {"  %i = stablehlo.iota dim = 1 : tensor<1x3xi64>\n"
     "  %b = stablehlo.broadcast_in_dim %i, dims = [0, 1] : (tensor<1x3xi64>) -> tensor<2x3xi64>\n"
     "  %db = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<i64>) -> tensor<2x3xi64>\n"
     "  %a = stablehlo.add %b, %db : tensor<2x3xi64>\n"
     "  %s2 = stablehlo.slice %a [1:2, 0:3:2] : (tensor<2x3xi64>) -> tensor<1x2xi64>\n"
     "  %t = stablehlo.slice %s2 [0:1, 1:2] : (tensor<1x2xi64>) -> tensor<1x1xi64>\n"
     "  %v = stablehlo.reshape %t : (tensor<1x1xi64>) -> tensor<i64>\n", 9},
    /* 2-d concatenate on dim 1: [[d, 1]] ++ [[2]] -> element 2 is 2;
     * + d = 9 */
    {K(1, "one") K(2, "two")
     "  %d1 = stablehlo.reshape %d : (tensor<i64>) -> tensor<1x1xi64>\n"
     "  %o1 = stablehlo.reshape %one : (tensor<i64>) -> tensor<1x1xi64>\n"
     "  %t1 = stablehlo.reshape %two : (tensor<i64>) -> tensor<1x1xi64>\n"
     "  %c = stablehlo.concatenate %d1, %o1, %t1, dim = 1 : (tensor<1x1xi64>, tensor<1x1xi64>, tensor<1x1xi64>) -> tensor<1x3xi64>\n"
     "  %s2 = stablehlo.slice %c [0:1, 2:3] : (tensor<1x3xi64>) -> tensor<1x1xi64>\n"
     "  %t = stablehlo.reshape %s2 : (tensor<1x1xi64>) -> tensor<i64>\n"
     "  %v = stablehlo.add %t, %d : tensor<i64>\n", 9},
    /* narrowing: 7 * 37 = 259 as i8 is 3; as ui8 3; i16 stays 259 */
    {K(37, "c")
     "  %m = stablehlo.multiply %d, %c : tensor<i64>\n"
     "  %n = stablehlo.convert %m : (tensor<i64>) -> tensor<i8>\n"
     "  %v = stablehlo.convert %n : (tensor<i8>) -> tensor<i64>\n", 3},
    {K(37, "c")
     "  %m = stablehlo.multiply %d, %c : tensor<i64>\n"
     "  %n = stablehlo.convert %m : (tensor<i64>) -> tensor<i16>\n"
     "  %v = stablehlo.convert %n : (tensor<i16>) -> tensor<i64>\n", 259},
    /* i8 wrap to negative: 7 * 19 = 133 -> -123 as i8; abs 123 */
    {K(19, "c")
     "  %m = stablehlo.multiply %d, %c : tensor<i64>\n"
     "  %n = stablehlo.convert %m : (tensor<i64>) -> tensor<i8>\n"
     "  %a = stablehlo.abs %n : tensor<i8>\n"
     "  %v = stablehlo.convert %a : (tensor<i8>) -> tensor<i64>\n", 123},
    /* pred to i64 via convert of a compare, and i64 to pred */
    {K(3, "c")
     "  %p = stablehlo.convert %d : (tensor<i64>) -> tensor<i1>\n"
     "  %q = stablehlo.convert %p : (tensor<i1>) -> tensor<i64>\n"
     "  %v = stablehlo.add %q, %c : tensor<i64>\n", 4},
    /* a splat constant of ui32 and an i32 tensor constant */
    {"  %c = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
     "  %s2 = stablehlo.slice %c [2:3] : (tensor<3xi32>) -> tensor<1xi32>\n"
     "  %r2 = stablehlo.reshape %s2 : (tensor<1xi32>) -> tensor<i32>\n"
     "  %u = stablehlo.constant dense<4> : tensor<2xui32>\n"
     "  %u1 = stablehlo.slice %u [1:2] : (tensor<2xui32>) -> tensor<1xui32>\n"
     "  %u2 = stablehlo.reshape %u1 : (tensor<1xui32>) -> tensor<ui32>\n"
     "  %u3 = stablehlo.convert %u2 : (tensor<ui32>) -> tensor<i32>\n"
     "  %a = stablehlo.multiply %r2, %u3 : tensor<i32>\n"
     "  %v = stablehlo.convert %a : (tensor<i32>) -> tensor<i64>\n", 12},
    /* select with a scalar predicate over vectors; clamp with scalar
     * bounds over a vector: [7, 1] clamped to [2, 5] is [5, 2] */
    {K(1, "one") K(2, "lo") K(5, "hi")
     "  %t = stablehlo.compare GT, %d, %one : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "  %d1 = stablehlo.reshape %d : (tensor<i64>) -> tensor<1xi64>\n"
     "  %o1 = stablehlo.reshape %one : (tensor<i64>) -> tensor<1xi64>\n"
     "  %a = stablehlo.concatenate %d1, %o1, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>\n"
     "  %b = stablehlo.concatenate %o1, %d1, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>\n"
     "  %sel = stablehlo.select %t, %a, %b : tensor<i1>, tensor<2xi64>\n"
     "  %c = stablehlo.clamp %lo, %sel, %hi : (tensor<i64>, tensor<2xi64>, tensor<i64>) -> tensor<2xi64>\n"
     "  %c0 = stablehlo.slice %c [0:1] : (tensor<2xi64>) -> tensor<1xi64>\n"
     "  %c1 = stablehlo.slice %c [1:2] : (tensor<2xi64>) -> tensor<1xi64>\n"
     "  %m = stablehlo.multiply %c0, %c1 : tensor<1xi64>\n"
     "  %v = stablehlo.reshape %m : (tensor<1xi64>) -> tensor<i64>\n", 10},
    /* unsigned narrowing: 7 * 37 = 259 as ui8 is 3, as ui16 259 */
    {K(37, "c")
     "  %m = stablehlo.multiply %d, %c : tensor<i64>\n"
     "  %n = stablehlo.convert %m : (tensor<i64>) -> tensor<ui8>\n"
     "  %w = stablehlo.convert %m : (tensor<i64>) -> tensor<ui16>\n"
     "  %n64 = stablehlo.convert %n : (tensor<ui8>) -> tensor<i64>\n"
     "  %w64 = stablehlo.convert %w : (tensor<ui16>) -> tensor<i64>\n"
     "  %v = stablehlo.add %n64, %w64 : tensor<i64>\n", 262},
    /* a 2-d iota along dimension 0, concatenated on dimension 0:
     * [[0, 0], [1, 1]] ++ [[d, d]]; element [2, 1] is d */
    {"  %i = stablehlo.iota dim = 0 : tensor<2x2xi64>\n"
     "  %db = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<i64>) -> tensor<1x2xi64>\n"
     "  %c = stablehlo.concatenate %i, %db, dim = 0 : (tensor<2x2xi64>, tensor<1x2xi64>) -> tensor<3x2xi64>\n"
     "  %e = stablehlo.slice %c [2:3, 1:2] : (tensor<3x2xi64>) -> tensor<1x1xi64>\n"
     "  %f = stablehlo.slice %c [1:2, 0:1] : (tensor<3x2xi64>) -> tensor<1x1xi64>\n"
     "  %g = stablehlo.add %e, %f : tensor<1x1xi64>\n"
     "  %v = stablehlo.reshape %g : (tensor<1x1xi64>) -> tensor<i64>\n", 8},
};

static void test_folds(void **state) {
  for (size_t i = 0; i < sizeof k_folds / sizeof k_folds[0]; i++) {
    int64_t got = fold_size(C(state), k_folds[i].body);
    if (got != k_folds[i].want)
      fail_msg("case %zu: size %lld, want %lld (%s)", i, (long long)got,
               (long long)k_folds[i].want, got < 0 ? tu_msg : "");
  }
}

/* Not folded: the size stays unknown and refinement says so. */
static void test_not_folded(void **state) {
  static const char *const bodies[] = {
      /* division and remainder by zero */
      K(0, "z") "  %v = stablehlo.divide %d, %z : tensor<i64>\n",
      K(0, "z") "  %v = stablehlo.remainder %d, %z : tensor<i64>\n",
      /* INT64_MIN / -1 and % -1 */
      K(-9223372036854775808, "mn") K(-1, "m1")
      "  %q = stablehlo.divide %mn, %m1 : tensor<i64>\n"
      "  %v = stablehlo.add %q, %d : tensor<i64>\n",
      K(-9223372036854775808, "mn") K(-1, "m1")
      "  %q = stablehlo.remainder %mn, %m1 : tensor<i64>\n"
      "  %v = stablehlo.add %q, %d : tensor<i64>\n",
      /* abs and sign of unsigned, negate of pred, arithmetic on pred */
      "  %u = stablehlo.convert %d : (tensor<i64>) -> tensor<ui64>\n"
      "  %a = stablehlo.abs %u : tensor<ui64>\n"
      "  %v = stablehlo.convert %a : (tensor<ui64>) -> tensor<i64>\n",
      "  %u = stablehlo.convert %d : (tensor<i64>) -> tensor<ui64>\n"
      "  %a = stablehlo.sign %u : tensor<ui64>\n"
      "  %v = stablehlo.convert %a : (tensor<ui64>) -> tensor<i64>\n",
      "  %p = stablehlo.convert %d : (tensor<i64>) -> tensor<i1>\n"
      "  %a = stablehlo.add %p, %p : tensor<i1>\n"
      "  %v = stablehlo.convert %a : (tensor<i1>) -> tensor<i64>\n",
      /* negate of a pred */
      "  %p = stablehlo.convert %d : (tensor<i64>) -> tensor<i1>\n"
      "  %a = stablehlo.negate %p : tensor<i1>\n"
      "  %v = stablehlo.convert %a : (tensor<i1>) -> tensor<i64>\n",
      /* a value from a float */
      "  %f = stablehlo.convert %d : (tensor<i64>) -> tensor<f32>\n"
      "  %v = stablehlo.convert %f : (tensor<f32>) -> tensor<i64>\n",
      /* a broadcast to a dimension the result does not have */
      "  %c = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n"
      "  %b = stablehlo.broadcast_in_dim %c, dims = [5] : (tensor<2xi64>) -> tensor<3xi64>\n"
      "  %e = stablehlo.slice %b [0:1] : (tensor<3xi64>) -> tensor<1xi64>\n"
      "  %v = stablehlo.reshape %e : (tensor<1xi64>) -> tensor<i64>\n",
      /* a slice past the end of its operand */
      "  %c = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi64>\n"
      "  %e = \"stablehlo.slice\"(%c) {start_indices = array<i64: 2>, limit_indices = array<i64: 3>, strides = array<i64: 2>} : (tensor<3xi64>) -> tensor<1xi64>\n"
      "  %f = \"stablehlo.slice\"(%c) {start_indices = array<i64: 3>, limit_indices = array<i64: 4>} : (tensor<3xi64>) -> tensor<1xi64>\n"
      "  %g = stablehlo.add %e, %f : tensor<1xi64>\n"
      "  %v = stablehlo.reshape %g : (tensor<1xi64>) -> tensor<i64>\n",
      /* an op that does not fold (popcnt) */
      "  %v = stablehlo.popcnt %d : tensor<i64>\n",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
    int64_t got = fold_size(C(state), bodies[i]);
    if (got >= 0) fail_msg("case %zu folded to %lld", i, (long long)got);
    TU_ASSERT_PREFIX(tu_msg, "fold.mlir:");
    TU_ASSERT_CONTAINS(tu_msg, "stablehlo.dynamic_iota: result 0: dimension 0 stays "
                               "dynamic");
  }
}

TU_MAIN(tu_setup_client, tu_teardown_client, cmocka_unit_test(test_folds),
        cmocka_unit_test(test_not_folded))
