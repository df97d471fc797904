/* test_chlo_errors.c - the CHLO decompositions (src/core/chlo.c) on the
 * inputs the other CHLO tests leave out: one table of ill-typed CHLO ops
 * (constant_like shapes and values, conj, is_inf, the broadcast_* family's
 * broadcast_dimensions, element and result types, operand counts, top_k's
 * k, ranks and result types), each with its status, "file:line:col:" and
 * message; then constant_like's value conversions into every kind of
 * element type (complex, f16, bf16, f8, pred, integer from float, f32
 * overflow, a boolean, dense splat and one-element values),
 * broadcast_compare's NOTYPE, is_inf / is_pos_inf on f8 types with and
 * without infinities, broadcast_complex of f64 parts and broadcast_add of
 * quantized operands, with the expected bytes worked out by hand. */
#include "test_bad_progs.h"

/* Program builders: each takes the attributes and types to vary. */
#define U2(op, ti, to)                                                         \
  "func.func @main(%a: " ti ") -> tensor<1xf32> {\n  %0:2 = " op " : (" ti     \
  ") -> (" to                                                                  \
  ")\n  %c = stablehlo.constant dense<0.0> : tensor<1xf32>\n  func.return %c " \
  ": tensor<1xf32>\n}\n"

static const tu_bad_prog errors_cases[] = {
    {U1("\"chlo.constant_like\"(%a) {value = 1.0 : f32}", "tensor<2xf32>",
        "tensor<3xf32>"),
     IA, "<input>:2:8:",
     "chlo.constant_like: result shape differs from the operand's"},
    {U1("\"chlo.constant_like\"(%a) {value = \"one\"}", "tensor<2xf32>",
        "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "chlo.constant_like: attribute 'value' must be a scalar that the result's "
     "element type f32 holds"},
    {U1("\"chlo.constant_like\"(%a) {value = dense<[1.0, 2.0]> : "
        "tensor<2xf32>}",
        "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "chlo.constant_like: attribute 'value' must be a scalar that the result's "
     "element type f32 holds"},
    {U1("\"chlo.constant_like\"(%a) {value = 1.0e300 : f64}", "tensor<2xf32>",
        "tensor<2xi32>"),
     IA, "<input>:2:8:",
     "chlo.constant_like: attribute 'value' must be a scalar that the result's "
     "element type i32 holds"},
    {U1("\"chlo.constant_like\"(%a) {value = 1.0 : f32}", "tensor<2xf32>",
        "tensor<2x!quant.uniform<i8:f32, 0.5:0>>"),
     IA,
     "<input>:2:8:", "chlo.constant_like: a quantized result is not supported"},
    {U1("\"chlo.constant_like\"(%a)", "tensor<2xf32>", "tensor<2xf32>"), IA,
     "<input>:2:8:", "chlo.constant_like: missing attribute 'value'"},
    {U1("\"chlo.conj\"(%a)", "tensor<2xf32>", "tensor<2xf64>"), IA,
     "<input>:2:8:", "chlo.conj: result type differs from operand type"},
    {U1("\"chlo.conj\"(%a)", "tensor<2xi32>", "tensor<2xi32>"), IA,
     "<input>:2:8:",
     "chlo.conj: operand must be a float or complex tensor, not i32"},
    {U1("\"chlo.is_inf\"(%a)", "tensor<2xf32>", "tensor<2xf32>"), IA,
     "<input>:2:8:",
     "chlo.is_inf: result must be a tensor of i1 with the operand's shape"},
    {U1("\"chlo.is_inf\"(%a)", "tensor<2xi32>", "tensor<2xi1>"), IA,
     "<input>:2:8:", "chlo.is_inf: operand must be a float tensor, not i32"},
    {B2("\"chlo.broadcast_add\"(%a, %b) {broadcast_dimensions = \"x\"}",
        "tensor<2x3xf32>", "tensor<3xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "chlo.broadcast_add: broadcast_dimensions must be a list of integers"},
    {B2("\"chlo.broadcast_add\"(%a, %b) {broadcast_dimensions = array<i64: 0, "
        "1>}",
        "tensor<2x3xf32>", "tensor<3xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "chlo.broadcast_add: broadcast_dimensions has 2 entries for an operand of "
     "rank 1"},
    {B2("\"chlo.broadcast_add\"(%a, %b) {broadcast_dimensions = array<i64: 1, "
        "0>}",
        "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "chlo.broadcast_add: broadcast_dimensions must be increasing dimensions "
     "of the result (rank 2)"},
    {B2("\"chlo.broadcast_add\"(%a, %b) {broadcast_dimensions = array<i64: 5>}",
        "tensor<2x3xf32>", "tensor<3xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "chlo.broadcast_add: broadcast_dimensions must be increasing dimensions "
     "of the result (rank 2)"},
    {B2("\"chlo.broadcast_complex\"(%a, %b)", "tensor<3xi32>", "tensor<3xi32>",
        "tensor<3xcomplex<f32>>"),
     IA, "<input>:2:8:",
     "chlo.broadcast_complex: operands must be f32 or f64, not i32"},
    {B2("\"chlo.broadcast_add\"(%a, %b)", "tensor<3xf32>", "tensor<3xf32>",
        "tensor<3xf16>"),
     IA, "<input>:2:8:",
     "chlo.broadcast_add: result element type must be f32, not f16"},
    {B2("\"chlo.broadcast_add\"(%a, %b)", "tensor<3xf32>", "tensor<3xf32>",
        "tensor<1x3xf32>"),
     IA, "<input>:2:8:",
     "chlo.broadcast_add: result rank 2 differs from the operands' highest "
     "rank 1"},
    {"func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n  %0 = "
     "\"chlo.broadcast_add\"(%a, %a, %a) : (tensor<3xf32>, tensor<3xf32>, "
     "tensor<3xf32>) -> tensor<3xf32>\n  func.return %0 : tensor<3xf32>\n}\n",
     IA, "<input>:2:8:",
     "chlo.broadcast_add: expects 2 operand(s) and 1 result(s), got 3 and 1"},
    {U2("\"chlo.top_k\"(%a) {k = 1 : i64}", "tensor<3xcomplex<f32>>",
        "tensor<1xcomplex<f32>>, tensor<1xi32>"),
     IA,
     "<input>:2:10:", "chlo.top_k: element type complex<f32> is not ordered"},
    {U2("\"chlo.top_k\"(%a) {k = 4 : i64}", "tensor<3xf32>",
        "tensor<4xf32>, tensor<4xi32>"),
     IA, "<input>:2:10:",
     "chlo.top_k: k = 4 is out of range for a last dimension of 3"},
    {U2("\"chlo.top_k\"(%a) {k = 1.0 : f32}", "tensor<3xf32>",
        "tensor<1xf32>, tensor<1xi32>"),
     IA, "<input>:2:10:", "chlo.top_k: missing integer attribute 'k'"},
    {U2("\"chlo.top_k\"(%a) {k = 1 : i64}", "tensor<f32>",
        "tensor<1xf32>, tensor<1xi32>"),
     IA, "<input>:2:10:", "chlo.top_k: operand must have rank 1 or more"},
    {U2("\"chlo.top_k\"(%a) {k = 1 : i64}", "tensor<3xf32>",
        "tensor<1xf32>, tensor<1xf32>"),
     IA, "<input>:2:10:", "chlo.top_k: indices must be tensor<1xi32>"},
    {U2("\"chlo.top_k\"(%a) {k = 1 : i64}", "tensor<3xf32>",
        "tensor<2xf32>, tensor<1xi32>"),
     IA, "<input>:2:10:", "chlo.top_k: values must be tensor<1xf32>"},
    {U2("\"chlo.tan\"(%a)", "tensor<3xf32>", "tensor<3xf32>, tensor<3xf32>"),
     IA, "<input>:2:10:", "stablehlo.tan: expects 1 result(s), got 2"},
    {B2("\"chlo.broadcast_add\"(%a, %b)", "tuple<tensor<f32>>", "tensor<f32>",
        "tensor<f32>"),
     IA, "<input>:2:8:", "chlo.broadcast_add: operand 0 must be a tensor"},
    {U1("\"chlo.constant_like\"(%a) {value = -1.0e300 : f64}", "tensor<2xf32>",
        "tensor<2xi32>"),
     IA, "<input>:2:8:",
     "chlo.constant_like: attribute 'value' must be a scalar that the result's "
     "element type i32 holds"},
    {U1("\"chlo.constant_like\"(%a) {value = dense<1.5> : tensor<f64>}",
        "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "chlo.constant_like: attribute 'value' must be a scalar that the result's "
     "element type f32 holds"},
    {U1("\"chlo.conj\"(%a)", "tensor<2x!quant.uniform<i8:f32, 0.5>>",
        "tensor<2x!quant.uniform<i8:f32, 0.5>>"),
     IA, "<input>:2:8:",
     "chlo.conj: operand must be a float or complex tensor, not i8"},
    {U1("\"chlo.is_inf\"(%a)", "tensor<2x!quant.uniform<i8:f32, 0.5>>",
        "tensor<2xi1>"),
     IA, "<input>:2:8:", "chlo.is_inf: operand must be a float tensor, not i8"},
    {U1("\"chlo.is_inf\"(%a)", "tensor<2xf32>", "tensor<3xi1>"), IA,
     "<input>:2:8:",
     "chlo.is_inf: result must be a tensor of i1 with the operand's shape"},
    {B2("\"chlo.broadcast_add\"(%a, %b) {broadcast_dimensions = array<i64: "
        "-1>}",
        "tensor<2x3xf32>", "tensor<3xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "chlo.broadcast_add: broadcast_dimensions must be increasing dimensions "
     "of the result (rank 2)"},
    {B2("\"chlo.broadcast_add\"(%a, %b)",
        "tensor<3x!quant.uniform<i8:f32, 0.5>>", "tensor<3xf32>",
        "tensor<3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.add: operand types differ: tensor<3x!quant.uniform<i8:f32, "
     "0.5:0>> vs tensor<3xf32>"},
    {U2("\"chlo.top_k\"(%a) {k = 1 : i64}",
        "tensor<3x!quant.uniform<i8:f32, 0.5>>",
        "tensor<1x!quant.uniform<i8:f32, 0.5>>, tensor<1xi32>"),
     IA, "<input>:2:10:", "chlo.top_k: element type i8 is not ordered"},
    {U2("\"chlo.top_k\"(%a) {k = -1 : i64}", "tensor<3xf32>",
        "tensor<1xf32>, tensor<1xi32>"),
     IA, "<input>:2:10:",
     "chlo.top_k: k = -1 is out of range for a last dimension of 3"},
};

TU_BAD_PROGS_TEST(test_errors, errors_cases)

/* constant_like of one value into the result type, run. */
#define CL(val, t)                                    \
  "func.func @main(%a: tensor<2xf32>) -> tensor<2x" t \
  "> {\n"                                             \
  "  %0 = \"chlo.constant_like\"(%a) {value = " val   \
  "} : (tensor<2xf32>) -> "                           \
  "tensor<2x" t ">\n  func.return %0 : tensor<2x" t ">\n}\n"

static void test_constant_like_values(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const float a[2] = {0, 0};
  tu_in in[1] = {{TU_SHAPE(XRT_F32, 2), a}};
  tu_out o;
  /* complex: real part the value, imaginary part 0 */
  TU_RUN_OK(c, CL("2.5 : f32", "complex<f32>"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 2.5f, 0.0f, 2.5f, 0.0f);
  tu_out_free(&o);
  TU_RUN_OK(c, CL("-3 : i32", "complex<f64>"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, double, -3.0, 0.0, -3.0, 0.0);
  tu_out_free(&o);
  /* f16 1.0 = 0x3C00, bf16 1.0 = 0x3F80, f64 from an integer */
  TU_RUN_OK(c, CL("1.0 : f32", "f16"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, uint16_t, 0x3C00, 0x3C00);
  tu_out_free(&o);
  TU_RUN_OK(c, CL("1.0 : f32", "bf16"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, uint16_t, 0x3F80, 0x3F80);
  tu_out_free(&o);
  TU_RUN_OK(c, CL("2 : i32", "f64"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, double, 2.0, 2.0);
  tu_out_free(&o);
  /* f8E4M3FN 0.5: exponent 6 (bias 7), mantissa 0 = 0b0'0110'000 */
  TU_RUN_OK(c, CL("0.5 : f32", "f8E4M3FN"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 0x30, 0x30);
  tu_out_free(&o);
  /* beyond FLT_MAX: infinity */
  TU_RUN_OK(c, CL("1.0e300 : f64", "f32"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, float, INFINITY, INFINITY);
  tu_out_free(&o);
  /* integers from a float value (truncated), pred from any nonzero */
  TU_RUN_OK(c, CL("3.0 : f32", "i32"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 3, 3);
  tu_out_free(&o);
  TU_RUN_OK(c, CL("5 : i32", "i1"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 1);
  tu_out_free(&o);
  /* dense values: an integer one (kept as a one-entry list) and a float
   * splat of the result's type */
  TU_RUN_OK(c, CL("dense<7> : tensor<i32>", "i32"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 7, 7);
  tu_out_free(&o);
  TU_RUN_OK(c, CL("dense<1.5> : tensor<f32>", "f32"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 1.5f, 1.5f);
  tu_out_free(&o);
}

/* compare_type NOTYPE is dropped: the float compare stays a float one. */
static void test_broadcast_compare_notype(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const char *prog =
      "func.func @main(%a: tensor<3xf32>, %b: tensor<f32>) -> tensor<3xi1> {\n"
      "  %0 = chlo.broadcast_compare %a, %b {comparison_direction = "
      "#chlo<comparison_direction LT>, compare_type = "
      "#chlo<comparison_type NOTYPE>} : (tensor<3xf32>, tensor<f32>) -> "
      "tensor<3xi1>\n  func.return %0 : tensor<3xi1>\n}\n";
  const float a[3] = {-1, 2, 0.5f}, b = 1;
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 3), a}, {TU_SCALAR(XRT_F32), &b}};
  tu_out o;
  TU_RUN_OK(c, prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 0, 1);
  tu_out_free(&o);
}

/* More constant_like values: a boolean, a one-element dense list, f32
 * underflow of a huge negative value to -inf. */
static void test_constant_like_more(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const float a[2] = {0, 0};
  tu_in in[1] = {{TU_SHAPE(XRT_F32, 2), a}};
  tu_out o;
  TU_RUN_OK(c, CL("true", "i1"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 1);
  tu_out_free(&o);
  TU_RUN_OK(c, CL("dense<[1.5]> : tensor<1xf32>", "f32"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 1.5f, 1.5f);
  tu_out_free(&o);
  TU_RUN_OK(c, CL("-1.0e300 : f64", "f32"), 1, in, &o);
  TU_ASSERT_OUT(&o, 0, float, -INFINITY, -INFINITY);
  tu_out_free(&o);
}

/* is_inf on small floats: f8E5M2 has infinities (0x7C = +inf, 0xFC =
 * -inf, 0x3C = 1.0); f8E4M3FN has none, so nothing is infinite (0x7E is
 * 448, 0x7F NaN). */
static void test_is_inf_small_floats(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const char *prog =
      "func.func @main(%a: tensor<3xf8E5M2>, %b: tensor<2xf8E4M3FN>) -> "
      "(tensor<3xi1>, tensor<3xi1>, tensor<2xi1>) {\n"
      "  %0 = chlo.is_pos_inf %a : tensor<3xf8E5M2> -> tensor<3xi1>\n"
      "  %1 = chlo.is_inf %a : tensor<3xf8E5M2> -> tensor<3xi1>\n"
      "  %2 = chlo.is_inf %b : tensor<2xf8E4M3FN> -> tensor<2xi1>\n"
      "  func.return %0, %1, %2 : tensor<3xi1>, tensor<3xi1>, "
      "tensor<2xi1>\n}\n";
  const uint8_t a[3] = {0x7C, 0xFC, 0x3C}, b[2] = {0x7E, 0x7F};
  tu_in in[2] = {{TU_SHAPE(XRT_F8E5M2, 3), a}, {TU_SHAPE(XRT_F8E4M3FN, 2), b}};
  tu_out o;
  TU_RUN_OK(c, prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, uint8_t, 1, 0, 0);
  TU_ASSERT_OUT(&o, 1, uint8_t, 1, 1, 0);
  TU_ASSERT_OUT(&o, 2, uint8_t, 0, 0);
  tu_out_free(&o);
}

/* broadcast_complex of f64 parts gives complex<f64>. */
static void test_broadcast_complex_f64(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const char *prog =
      "func.func @main(%a: tensor<2xf64>, %b: tensor<f64>) -> "
      "tensor<2xcomplex<f64>> {\n"
      "  %0 = chlo.broadcast_complex %a, %b : (tensor<2xf64>, tensor<f64>) -> "
      "tensor<2xcomplex<f64>>\n  func.return %0 : tensor<2xcomplex<f64>>\n}\n";
  const double a[2] = {1.5, -2}, b = 0.25;
  tu_in in[2] = {{TU_SHAPE(XRT_F64, 2), a}, {TU_SCALAR(XRT_F64), &b}};
  tu_out o;
  TU_RUN_OK(c, prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, double, 1.5, 0.25, -2.0, 0.25);
  tu_out_free(&o);
}

/* broadcast_add of quantized operands keeps the quantized types: with
 * scale 0.5 and zero point 0, storage 2, 4 are 1.0, 2.0, plus storage 2 =
 * 1.0 gives 2.0, 3.0, stored as 4, 6. */
static void test_broadcast_add_quantized(void **state) {
  xrt_client *c = (xrt_client *)*state;
  const char *prog =
      "func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>, %b: "
      "tensor<!quant.uniform<i8:f32, 0.5>>) -> "
      "tensor<2x!quant.uniform<i8:f32, 0.5>> {\n"
      "  %0 = chlo.broadcast_add %a, %b : (tensor<2x!quant.uniform<i8:f32, "
      "0.5>>, tensor<!quant.uniform<i8:f32, 0.5>>) -> "
      "tensor<2x!quant.uniform<i8:f32, 0.5>>\n"
      "  func.return %0 : tensor<2x!quant.uniform<i8:f32, 0.5>>\n}\n";
  const int8_t a[2] = {2, 4}, b = 2;
  tu_in in[2] = {{TU_SHAPE(XRT_S8, 2), a}, {TU_SCALAR(XRT_S8), &b}};
  tu_out o;
  TU_RUN_OK(c, prog, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, 4, 6);
  tu_out_free(&o);
}

TU_MAIN(tu_setup_client, tu_teardown_client, cmocka_unit_test(test_errors),
        cmocka_unit_test(test_constant_like_values),
        cmocka_unit_test(test_broadcast_compare_notype),
        cmocka_unit_test(test_constant_like_more),
        cmocka_unit_test(test_is_inf_small_floats),
        cmocka_unit_test(test_broadcast_complex_f64),
        cmocka_unit_test(test_broadcast_add_quantized))
