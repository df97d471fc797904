/* test_parse_errors.c - the error paths of the text parser (src/core/parse.c)
 * that test_parser.c does not reach: one table of {bad program, status,
 * "file:line:col:" prefix, message fragment} for dense literals (hex
 * strings, ranges of every integer kind, hex bit patterns of floats,
 * complex elements), types (quantized, complex, unranked, rank and
 * dimension limits), attribute values skipped as balanced text
 * (unbalanced brackets, nesting limits, strings and comments inside) and
 * integer attributes out of range; then the literal forms that parse,
 * with their values computed by hand: hex bit patterns of signed types,
 * u64 max, float overflow to infinity, mixed complex elements; and a
 * program large enough (140 argument types, 1100 names) to grow the
 * parser's type and symbol tables, run for its value. */
#include "test_bad_progs.h"

/* A program returning one constant of type ty written as lit. */
#define C1(ty, lit)                                                        \
  "func.func @main() -> " ty " {\n  %0 = stablehlo.constant " lit " : " ty \
  "\n  func.return %0 : " ty "\n}\n"
/* A generic iota carrying extra attributes. */
#define G(attrs)                                                       \
  "func.func @main() -> tensor<2xi32> {\n  %0 = \"stablehlo.iota\"() " \
  "{iota_dimension = 0 : i64, " attrs                                  \
  "} : () -> tensor<2xi32>\n"                                          \
  "  func.return %0 : tensor<2xi32>\n}\n"

static const tu_bad_prog bad[] = {
    /* dense literals */
    {C1("tensor<f32>", "dense<\"0x0000>"), IA,
     "<input>:2:33:", "unterminated string"},
    {C1("tensor<i64>", "dense<99999999999999999999999>"), IA,
     "<input>:2:33:", "integer too large"},
    {C1("tensor<i64>", "dense<0x1234567890123456789>"), IA,
     "<input>:2:33:", "integer too large"},
    {C1("tensor<f32>", "dense<0x123456789>"), IA,
     "<input>:2:33:", "hex value out of range for f32"},
    {C1("tensor<f32>", "dense<-0x1>"), IA,
     "<input>:2:33:", "hex value out of range for f32"},
    {C1("tensor<i32>", "dense<1.5>"), IA,
     "<input>:2:33:", "expected an integer for i32"},
    {C1("tensor<i1>", "dense<-1>"), IA,
     "<input>:2:33:", "value -1 out of range for i1"},
    {C1("tensor<i1>", "dense<2>"), IA,
     "<input>:2:33:", "value 2 out of range for i1"},
    {C1("tensor<i8>", "dense<0x1ff>"), IA,
     "<input>:2:33:", "value 0x1ff out of range for i8"},
    {C1("tensor<i8>", "dense<-129>"), IA,
     "<input>:2:33:", "value -129 out of range for i8"},
    {C1("tensor<2xi32>", "dense<[[1], [2]]>"), IA,
     "<input>:2:34:", "expected a number, found '['"},
    {C1("tensor<2xi32>", "dense<\"0x01\">"), IA,
     "<input>:2:33:", "hex literal has 1 bytes, its type needs 8"},
    {C1("tensor<2xi32>", "dense<\"0x0102\">"), IA,
     "<input>:2:33:", "hex literal has 2 bytes, its type needs 8"},
    {C1("tensor<2xi32>", "dense<\"abcd\">"), IA,
     "<input>:2:33:", "expected a hex string \"0x...\""},
    {C1("tensor<2xi32>", "dense<\"0x012\">"), IA,
     "<input>:2:33:", "expected a hex string \"0x...\""},
    {C1("tensor<i32>", "dense<\"0x0g000000\">"), IA,
     "<input>:2:33:", "bad hex digit in literal"},
    {C1("tensor<2xi32>", "dense<>"), IA,
     "<input>:2:33:", "empty dense literal for a type with 2 elements"},
    {C1("tensor<2xi32>", "dense<[1, 2] 3>"), IA,
     "<input>:2:40:", "expected '>', found '3'"},
    {C1("tensor<f32>", "dense<.5>"), IA,
     "<input>:2:33:", "expected a number, found '.5'"},
    {C1("tensor<f32>", "dense<infinity>"), IA,
     "<input>:2:33:", "expected a number, found 'infinity'"},
    {C1("tensor<2xf32>", "dense<[1.0 2.0]>"), IA,
     "<input>:2:38:", "expected ']', found '2.0'"},
    {C1("tensor<i32>", "dense<[1]>"), IA, "<input>:2:33:",
     "dense literal nested deeper than the rank (0) of its type"},
    {C1("tensor<f4E2M1FN>", "dense<nan>"), IA,
     "<input>:2:33:", "value out of range for f4E2M1FN"},
    {C1("tensor<f4E2M1FN>", "dense<inf>"), IA,
     "<input>:2:33:", "value out of range for f4E2M1FN"},
    /* types */
    {C1("tensor<i32>", "dense<1> : !quant.uniform<f32:f32, 1.0>"), UN,
     "<input>:2:53:", "unknown quantized storage type 'f32'"},
    {C1("tensor<!quant.uniform<f32:f32, 1.0>>", "dense<1>"), UN,
     "<input>:1:44:", "unknown quantized storage type 'f32'"},
    {C1("tensor<!quant.uniform<i8:i32, 1.0>>", "dense<1>"), UN,
     "<input>:1:47:", "unknown quantized expressed type 'i32'"},
    {C1("tensor<complex<i32>>", "dense<1>"), UN,
     "<input>:1:37:", "unknown type 'complex<i32>'"},
    {C1("tensor<*xf32>", "dense<1.0>"), UN,
     "<input>:1:29:", "unranked tensors are not supported"},
    {C1("tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1xf32>", "dense<1.0>"), IA,
     "<input>:1:61:", "rank exceeds 16"},
    {C1("tensor<99999999999999999999xf32>", "dense<1.0>"), IA,
     "<input>:1:29:", "dimension too large"},
    {C1("tensor<2 3xf32>", "dense<1.0>"), IA,
     "<input>:1:31:", "expected 'x', found '3xf32'"},
    /* attribute values */
    {G("x = #a<[(]>"), IA, "<input>:2:63:", "unbalanced ']'"},
    {G("x = #a<[[["), IA, "<input>:2:64:", "unbalanced '}'"},
    {G("x = #a<(\"s)\" -> [b]>"), IA, "<input>:2:73:", "unbalanced '>'"},
    {G("x = [1, 2}"), IA, "<input>:2:63:", "expected ']', found '}'"},
    {G("x = }"), IA, "<input>:2:58:", "expected an attribute value, found '}'"},
    {G("= 1}"), IA, "<input>:2:54:", "expected an attribute name, found '='"},
    {G("x = dense<1> : tuple<>"), IA,
     "<input>:2:69:", "dense literal needs a tensor type"},
    {"func.func @main() -> tensor<2xi32> {\n  %0 = \"stablehlo.iota\"() "
     "{iota_dimension = 9223372036854775808 : i64} : () -> tensor<2xi32>\n"
     "  func.return %0 : tensor<2xi32>\n}\n",
     IA, "<input>:2:45:", "integer out of range"},
    {"func.func @main() -> tensor<2xi32> {\n  %0 = \"stablehlo.iota\"() "
     "{iota_dimension = -9223372036854775809 : i64} : () -> tensor<2xi32>\n"
     "  func.return %0 : tensor<2xi32>\n}\n",
     IA, "<input>:2:45:", "integer out of range"},
    {G("x = {a = 1 : i64 b = 2}"), IA,
     "<input>:2:71:", "expected '}', found 'b'"},
    {G("x = [1 2]"), IA, "<input>:2:61:", "expected ']', found '2'"},
    /* top level */
    {"func.func @main() -> tensor<f32> attributes {a = \"abc", IA,
     "<input>:1:50:", "unterminated string"},
    {"func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> "
     ": "
     "tensor<f32>\n  func.return %0 : tensor<f32>\n} }",
     IA, "<input>:4:3:", "expected 'func.func' or 'module', found '}'"},
    {"func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> "
     ": "
     "tensor<f32>\n  func.return %0 : tensor<f32>\n",
     IA, "<input>:4:1:", "expected '}', found end of input"},
    {"func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> "
     ": "
     "tensor<f32>\n  func.return %0 : tensor<f32>\n}\n\"",
     IA, "<input>:5:1:", "unterminated string"},
};

TU_BAD_PROGS_TEST(test_bad_programs, bad)

/* Builds G("x = OPEN^n CLOSE^n") style nesting n deep. */
static char *nested(const char *pre, char open, char close, int n,
                    const char *post) {
  size_t len = strlen(pre) + 2 * (size_t)n + strlen(post) + 1;
  char *s = malloc(len);
  assert_non_null(s);
  size_t k = 0;
  memcpy(s, pre, strlen(pre));
  k = strlen(pre);
  for (int i = 0; i < n; i++) s[k++] = open;
  for (int i = 0; i < n; i++) s[k++] = close;
  strcpy(s + k, post);
  return s;
}

#define G_PRE                                                          \
  "func.func @main() -> tensor<2xi32> {\n  %0 = \"stablehlo.iota\"() " \
  "{iota_dimension = 0 : i64, x = "
#define G_POST "} : () -> tensor<2xi32>\n  func.return %0 : tensor<2xi32>\n}\n"

/* Nesting limits: 256 levels of balanced text, 256 of attribute lists. */
static void test_nesting_limits(void **state) {
  (void)state;
  /* #a< + 300 '[' : skipped as balanced text, refused at level 257
   * (column 60 is the '<', the 257th '[' after it is column 317). */
  char *s = nested(G_PRE "#a<", '[', ']', 300, ">" G_POST);
  tu_parse_fails(s, NULL, IA, "<input>:2:317:", "nesting too deep");
  free(s);
  s = nested(G_PRE, '[', ']', 300, G_POST);
  tu_parse_fails(s, NULL, IA, "<input>:2:", "nesting deeper than 256 levels");
  free(s);
  /* 200 levels of each are fine. */
  s = nested(G_PRE "#a<", '[', ']', 200, ">" G_POST);
  xrt_program *p = NULL;
  if (xrt_program_parse(s, strlen(s), NULL, &p) != XRT_OK)
    fail_msg("%s", xrt_last_error());
  xrt_program_release(p);
  free(s);
}

/* Attribute forms that are accepted: the program still parses (and runs:
 * iota gives 0, 1 whatever unknown attributes it carries). */
static void test_attr_forms(void **state) {
  xrt_client *c = (xrt_client *)*state;
  static const char *ok[] = {
      G("x = #a<[// c\n]>"),
      G("x = #a"),
      G("x = #a<b>, y = #a.b<c:d>"),
      G("x = true : i1"),
      G("x = \"a\\n\\41\\zz\\\"\""),
      G("x = 0x7FC00000 : f32, y = 0x3C00 : f16, z = 0x3F80 : bf16, "
        "w = 0x3FF0000000000000 : f64, v = 1.0 : f16, u = 1.0 : bf16, t = 1 : "
        "i32"),
      G("x = dense<[1.5, 2.5]> : tensor<2xf32>, y = dense<\"0x0100\"> : "
        "tensor<2xi8>"),
      G("x = dense<1> : tensor<2xi32>, y = 1 : f32"),
      G("x = affine_map<(d0) -> (d0)>, y = #stablehlo<foo bar>"),
  };
  for (size_t i = 0; i < TU_COUNT(ok); i++) {
    tu_out o;
    TU_RUN_OK(c, ok[i], 0, NULL, &o);
    TU_ASSERT_OUT(&o, 0, int32_t, 0, 1);
    tu_out_free(&o);
  }
}

/* Literal values, each checked against the bytes the spec gives. */
static void test_literal_values(void **state) {
  xrt_client *c = (xrt_client *)*state;
  tu_out o;
  /* A hex integer of a signed type is a bit pattern. */
  TU_RUN_OK(c, C1("tensor<2xi8>", "dense<[0xff, 0x80]>"), 0, NULL, &o);
  TU_ASSERT_OUT(&o, 0, int8_t, -1, -128);
  tu_out_free(&o);
  TU_RUN_OK(c, C1("tensor<i64>", "dense<0xFFFFFFFFFFFFFFFF>"), 0, NULL, &o);
  TU_ASSERT_OUT(&o, 0, int64_t, -1);
  tu_out_free(&o);
  TU_RUN_OK(c, C1("tensor<ui64>", "dense<18446744073709551615>"), 0, NULL, &o);
  TU_ASSERT_OUT(&o, 0, uint64_t, UINT64_MAX);
  tu_out_free(&o);
  TU_RUN_OK(c, C1("tensor<i32>", "dense<true>"), 0, NULL, &o);
  TU_ASSERT_OUT(&o, 0, int32_t, 1);
  tu_out_free(&o);
  /* f32: beyond FLT_MAX + half an ulp is infinity; 1e38 is finite. */
  TU_RUN_OK(c, C1("tensor<4xf32>", "dense<[1.0e50, -1.0e39, 1.0e38, -inf]>"), 0,
            NULL, &o);
  TU_ASSERT_OUT(&o, 0, float, INFINITY, -INFINITY, 1.0e38f, -INFINITY);
  tu_out_free(&o);
  /* 0X (capital) bit pattern, exponent with '+', tiny to zero. */
  TU_RUN_OK(c, C1("tensor<3xf32>", "dense<[0X3F800000, 1.5e+3, 1.5e-3000]>"), 0,
            NULL, &o);
  TU_ASSERT_OUT(&o, 0, float, 1.0f, 1500.0f, 0.0f);
  tu_out_free(&o);
  /* More digits than a double holds exactly: parsed with strtod. */
  TU_RUN_OK(c, C1("tensor<f64>", "dense<12345678901234567890.5>"), 0, NULL, &o);
  TU_ASSERT_OUT(&o, 0, double, 12345678901234567890.5);
  tu_out_free(&o);
  /* Complex elements: a bare real has imaginary part 0. */
  TU_RUN_OK(c, C1("tensor<2xcomplex<f32>>", "dense<[1.0, (2.0, -3.0)]>"), 0,
            NULL, &o);
  TU_ASSERT_OUT(&o, 0, float, 1.0f, 0.0f, 2.0f, -3.0f);
  tu_out_free(&o);
  /* An empty tensor may be written dense<>. */
  TU_RUN_OK(c, C1("tensor<0xi32>", "dense<>"), 0, NULL, &o);
  assert_int_equal(o.bytes[0], 0);
  tu_out_free(&o);
}

/* A program with 140 arguments of distinct types and 1100 named values:
 * the parser's type and symbol tables grow past their first sizes (256
 * types, 1024 symbols) and still resolve every name.  The result is the
 * last constant, 1099, plus argument 139's only element, 7. */
static void test_large_program(void **state) {
  xrt_client *c = (xrt_client *)*state;
  size_t cap = 1 << 17, n = 0;
  char *prog = malloc(cap);
  assert_non_null(prog);
  n += (size_t)snprintf(prog + n, cap - n, "func.func @main(");
  for (int i = 0; i < 140; i++)
    n += (size_t)snprintf(prog + n, cap - n, "%s%%a%d: tensor<%dxi32>",
                          i ? ", " : "", i, 140 - i);
  n += (size_t)snprintf(prog + n, cap - n, ") -> tensor<1xi32> {\n");
  for (int i = 0; i < 1100; i++)
    n += (size_t)snprintf(
        prog + n, cap - n,
        "  %%v%d = stablehlo.constant dense<%d> : tensor<1xi32>\n", i, i);
  n +=
      (size_t)snprintf(prog + n, cap - n,
                       "  %%r = stablehlo.add %%v1099, %%a139 : tensor<1xi32>\n"
                       "  func.return %%r : tensor<1xi32>\n}\n");
  assert_true(n < cap);
  static const int32_t zeros[140] = {0};
  const int32_t seven = 7;
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_executable *exe = NULL;
  if (xrt_compile(c, prog, n, NULL, &exe) != XRT_OK)
    fail_msg("%s", xrt_last_error());
  xrt_buffer *args[140] = {0}, *out = NULL;
  for (int i = 0; i < 140; i++) {
    xrt_shape sh = TU_SHAPE(XRT_S32, 140 - i);
    assert_int_equal(
        xrt_buffer_from_host(c, dev, &sh, i == 139 ? &seven : zeros, &args[i]),
        XRT_OK);
  }
  assert_int_equal(xrt_execute(exe, dev, args, 140, &out, 1, NULL), XRT_OK);
  int32_t got = 0;
  assert_int_equal(xrt_buffer_to_host(out, &got, sizeof got), XRT_OK);
  assert_int_equal(got, 1099 + 7);
  xrt_buffer_release(out);
  for (int i = 0; i < 140; i++) xrt_buffer_release(args[i]);
  xrt_executable_release(exe);
  free(prog);
}

TU_MAIN(tu_setup_client, tu_teardown_client,
        cmocka_unit_test(test_bad_programs),
        cmocka_unit_test(test_nesting_limits),
        cmocka_unit_test(test_attr_forms),
        cmocka_unit_test(test_literal_values),
        cmocka_unit_test(test_large_program))
