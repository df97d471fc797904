/* test_parse_print_forms.c - xrt_program_print (src/core/print.c) on the
 * attribute and type forms test_print.c does not print: symbol names that
 * need quotes, enums whose value is not an identifier or is a reserved
 * word, dictionaries with quoted keys, boolean lists, unit attributes,
 * type attributes, float attributes that only f64 holds exactly (inf, the
 * smallest f32 subnormal), quantized types with a narrowed storage range,
 * a named module with a non-default stablehlo.version, integer arrays
 * that are not boolean or do not fit i32.  Each program is
 * printed, the printed op line must hold the expected text (written by
 * hand from MLIR's syntax), and the printed text must parse back and print
 * to itself. */
#include "test_util.h"

/* A generic iota carrying the extra attribute attr. */
#define IOTA(attr)                                                     \
  "func.func @main() -> tensor<2xi32> {\n  %0 = \"stablehlo.iota\"() " \
  "{iota_dimension = 0 : i64, " attr                                   \
  "} : () -> tensor<2xi32>\n"                                          \
  "  func.return %0 : tensor<2xi32>\n}\n"

typedef struct print_case {
  const char *text, *want;
} print_case;

static const print_case cases[] = {
    {IOTA("x = @\"a b\""), "iota_dimension = 0 : i64, x = @\"a b\"}"},
    {IOTA("y = #stablehlo<foo 1x>"), "y = \"foo 1x\"}"},
    {IOTA("z = {\"a b\" = 1 : i64, c = 2 : i64}"),
     "z = {\"a b\" = 1 : i64, c = 2 : i64}}"},
    {IOTA("w = #stablehlo<foo if>"), "w = if}"},
    {IOTA("v = [true, false]"), "v = [true, false]}"},
    /* inf as f32 bits is printed as the f64 bit pattern it is stored as */
    {IOTA("t = 0x7F800000 : f32"), "t = 0x7FF0000000000000 : f64}"},
    {IOTA("s = 0xFF800000 : f32"), "s = 0xFFF0000000000000 : f64}"},
    {IOTA("q = 1.0e-45 : f32"), "q = 1.0e-45 : f32}"},
    {IOTA("p = i32"), "p = i32}"},
    {IOTA("o = tensor<2xf32>"), "o = tensor<2xf32>}"},
    {IOTA("\"a-b\" = 1 : i64"),
     "{\"a-b\" = 1 : i64, iota_dimension = 0 : i64}"},
    {IOTA("m"), "iota_dimension = 0 : i64, m}"},
    {IOTA("window_reversal = array<i1: true, false>, dims = array<i64: 1, 0>"),
     "dims = array<i64: 1, 0>, iota_dimension = 0 : i64, window_reversal = "
     "array<i1: true, false>}"},
    {IOTA("y = #stablehlo<comparison_direction EQ>, comparison_direction = "
          "#stablehlo<comparison_direction EQ>"),
     "{comparison_direction = #stablehlo<comparison_direction EQ>, "
     "iota_dimension = 0 : i64, y = EQ}"},
    {IOTA("x = 1.1 : f64, y = 0.1 : f32, window_reversal = array<i64: 0, 2>, "
          "broadcast_dimensions = array<i64: 4294967296>"),
     "{broadcast_dimensions = array<i64: 4294967296>, iota_dimension = 0 : "
     "i64, window_reversal = array<i64: 0, 2>, x = 1.1 : f64, y = 0.1 : f32}"},
    {"func.func @main(%a: tensor<2x!quant.uniform<i8<-128:100>:f32, 0.5>>) -> "
     "tensor<2x!quant.uniform<i8<-128:100>:f32, 0.5>> {\n"
     "  func.return %a : tensor<2x!quant.uniform<i8<-128:100>:f32, 0.5>>\n}\n",
     "(%arg0: tensor<2x!quant.uniform<i8<-128:100>:f32, 0.5>>)"},
    {"func.func @main(%a: tensor<2x!quant.uniform<u8<0:100>:f32:0, {0.5:3, "
     "0.25:4}>>) -> tensor<2x!quant.uniform<u8<0:100>:f32:0, {0.5:3, 0.25:4}>> "
     "{\n"
     "  func.return %a : tensor<2x!quant.uniform<u8<0:100>:f32:0, {0.5:3, "
     "0.25:4}>>\n}\n",
     "(%arg0: tensor<2x!quant.uniform<u8<0:100>:f32:0, {0.5:3, 0.25:4}>>)"},
    /* a hex scale is the f64's bit pattern (MLIR's reading): 0.5 */
    {"func.func @main(%a: tensor<2x!quant.uniform<u64:f32, "
     "0x3FE0000000000000>>) -> "
     "tensor<2x!quant.uniform<i64:f32, 0.25>> {\n"
     "  %0 = \"stablehlo.uniform_quantize\"(%a) : "
     "(tensor<2x!quant.uniform<u64:f32, "
     "0x3FE0000000000000>>) -> tensor<2x!quant.uniform<i64:f32, 0.25>>\n"
     "  func.return %0 : tensor<2x!quant.uniform<i64:f32, 0.25>>\n}\n",
     "(%arg0: tensor<2x!quant.uniform<u64:f32, 0.5>>) -> "
     "tensor<2x!quant.uniform<i64:f32, 0.25>>"},
    /* enum values that are reserved words keep their #dialect<enum ...> */
    {IOTA("a = #stablehlo<foo true>, b = #stablehlo<foo dense>, "
          "c = #stablehlo<foo i32>"),
     "{a = #stablehlo<enum true>, b = #stablehlo<enum dense>, "
     "c = #stablehlo<enum i32>, iota_dimension = 0 : i64}"},
    /* a scale with no shortest decimal form: inf (only ops' types are
     * verified, not a signature's) */
    {"func.func @main(%a: tensor<2x!quant.uniform<i8:f32, inf>>) -> "
     "tensor<2x!quant.uniform<i8:f32, inf>> {\n"
     "  func.return %a : tensor<2x!quant.uniform<i8:f32, inf>>\n}\n",
     "(%arg0: tensor<2x!quant.uniform<i8:f32, inf>>)"},
    {"module @m attributes {stablehlo.version = \"1.0.0\"} {\n"
     "  func.func @main(%a: tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5>>) "
     "-> "
     "tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5>> {\n"
     "    return %a : tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5>>\n  "
     "}\n}\n",
     "module @m attributes {stablehlo.version = \"1.0.0\"} {\n"
     "  func.func @main(%arg0: tensor<2x!quant.uniform<i8<-127:127>:f32, "
     "0.5>>) "
     "-> tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5>> {\n"},
};

static char *print_text(const char *text) {
  xrt_program *p = NULL;
  if (xrt_program_parse(text, strlen(text), NULL, &p) != XRT_OK)
    fail_msg("parse: %s\n%s", xrt_last_error(), text);
  char *out = NULL;
  size_t n = 0;
  if (xrt_program_print(p, &out, &n) != XRT_OK)
    fail_msg("print: %s", xrt_last_error());
  xrt_program_release(p);
  assert_int_equal(strlen(out), n);
  return out;
}

static void test_forms(void **state) {
  (void)state;
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char *once = print_text(cases[i].text);
    TU_ASSERT_CONTAINS(once, cases[i].want);
    char *twice = print_text(once);
    assert_string_equal(once, twice);
    free(once);
    free(twice);
  }
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_forms))
