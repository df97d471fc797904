/* test_parse_ops_errors.c - the op-level checks of the parser
 * (src/core/parse_ops.c): result indices (%0#5) out of range, a value used
 * with another type than it was defined with (tuple, token and quantized
 * types in the message, a long type cut with "..."), result counts that
 * disagree with the type signature (pretty and generic forms, CHLO's
 * `T, T -> R`), regions of several blocks, and the interpreter/check ops'
 * operand, result and attribute rules.  Each with its status,
 * "file:line:col:" and message. */
#include "test_bad_progs.h"

/* Program builders: each takes the attributes and types to vary. */
#define QA0 "!quant.uniform<i8:f32:0, {0.5:0, 0.25:1}>"

static const tu_bad_prog ops_cases[] = {
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %0 = "
     "stablehlo.negate %a : tensor<f32>\n  func.return %0#5 : tensor<f32>\n}\n",
     IA, "<input>:3:15:", "%0 has 1 results, not #5"},
    {"func.func @main(%a: tuple<tensor<f32>, !stablehlo.token>) -> tensor<f32> "
     "{\n  %0 = stablehlo.negate %a : tensor<f32>\n  func.return %0 : "
     "tensor<f32>\n}\n",
     IA, "<input>:2:25:",
     "use of value '%a' expects type tensor<f32> but it has type "
     "tuple<tensor<f32>, !stablehlo.token>"},
    {"func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>) -> "
     "tensor<2x!quant.uniform<i8:f32, 0.5>> {\n  func.return %a : "
     "tensor<2x!quant.uniform<i8:f32, 0.25>>\n}\n",
     IA, "<input>:2:15:",
     "use of value '%a' expects type tensor<2x!quant.uniform<i8:f32, 0.25:0>> "
     "but it has type tensor<2x!quant.uniform<i8:f32, 0.5:0>>"},
    {"func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>) -> "
     "tensor<2x!quant.uniform<i8:f32, 0.5>> {\n  func.return %a : "
     "tensor<2x!quant.uniform<i8:f32, 0.5:3>>\n}\n",
     IA, "<input>:2:15:",
     "use of value '%a' expects type tensor<2x!quant.uniform<i8:f32, 0.5:3>> "
     "but it has type tensor<2x!quant.uniform<i8:f32, 0.5:0>>"},
    {"func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>) -> "
     "tensor<2x!quant.uniform<i8:f32, 0.5>> {\n  func.return %a : "
     "tensor<2x!quant.uniform<i16:f32, 0.5>>\n}\n",
     IA, "<input>:2:15:",
     "use of value '%a' expects type tensor<2x!quant.uniform<i16:f32, 0.5:0>> "
     "but it has type tensor<2x!quant.uniform<i8:f32, 0.5:0>>"},
    {"func.func @main(%a: "
     "tuple<tensor<1x2x3x4x5x6x7x8x9x10x11x12x13x14x15x16xf32>, "
     "tensor<1x2x3x4x5x6x7x8x9x10x11x12x13x14x15x16xf32>, "
     "tensor<1x2x3x4x5x6x7x8x9x10x11x12x13x14x15x16xf32>, "
     "tensor<1x2x3x4x5x6x7x8x9x10x11x12x13x14x15x16xf32>>) -> tensor<f32> {\n  "
     "%0 = stablehlo.negate %a : tensor<f32>\n  func.return %0 : "
     "tensor<f32>\n}\n",
     IA, "<input>:2:25:",
     "use of value '%a' expects type tensor<f32> but it has type "
     "tuple<tensor<1x2x3x4x5x6x7x8x9x10x11x12x13x14x15x16xf32>, "
     "tensor<1x2x3x4x5x6x7x8x9x10x11x12x13x14x15x16xf32>, "
     "tensor<1x2x3x4x5x6x7x8x9x10x11x12x13x14x15x16x..."},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %0:2 = "
     "stablehlo.negate %a : tensor<f32>\n  func.return %0#0 : tensor<f32>\n}\n",
     IA, "<input>:2:32:",
     "op 'stablehlo.negate' has 1 operands and 2 results but lists 1 types"},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %0:2 = "
     "\"stablehlo.negate\"(%a) : (tensor<f32>) -> tensor<f32>\n  func.return "
     "%0#0 : tensor<f32>\n}\n",
     IA, "<input>:2:10:",
     "op 'stablehlo.negate' defines 2 results but its type has 1"},
    {"func.func @main(%a: tensor<i32>) -> tensor<i32> {\n  %0 = "
     "stablehlo.while(%it = %a) : tensor<i32>\n  cond {\n    %c = "
     "stablehlo.constant dense<false> : tensor<i1>\n    stablehlo.return %c : "
     "tensor<i1>\n  ^bb1:\n    stablehlo.return %c : tensor<i1>\n  } do {\n    "
     "stablehlo.return %it : tensor<i32>\n  }\n  func.return %0 : "
     "tensor<i32>\n}\n",
     UN, "<input>:6:3:", "regions with several blocks"},
    {"func.func @main(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {\n  %0 "
     "= chlo.broadcast_add %a, %b : tensor<f32> -> tensor<f32>\n  func.return "
     "%0 : tensor<f32>\n}\n",
     IA, "<input>:2:36:",
     "op 'chlo.broadcast_add' has 2 operands but its type lists 1"},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  "
     "stablehlo.custom_call @foo(%a) : tensor<f32>, tensor<f32>, tensor<f32>\n "
     " func.return %a : tensor<f32>\n}\n",
     IA, "<input>:2:36:", "expected '(', found 'tensor'"},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %0, %1 = "
     "\"interpreter.probe\"(%a) {probe_id = \"p\"} : (tensor<f32>) -> "
     "(tensor<f32>, tensor<f32>)\n  func.return %0 : tensor<f32>\n}\n",
     IA, "<input>:2:12:", "interpreter.probe has 2 results, not 1"},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  "
     "\"check.expect_serialized_eq\"(%a) {probe_id = \"p\", iter = -1 : i64} : "
     "(tensor<f32>) -> ()\n  func.return %a : tensor<f32>\n}\n",
     IA, "<input>:2:3:", "iter must be an integer >= 0"},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  "
     "\"interpreter.run_parallel\"(%a) {programs = [[@main]], infeed = [1]} : "
     "(tensor<f32>) -> ()\n  func.return %a : tensor<f32>\n}\n",
     IA, "<input>:2:3:",
     "interpreter.run_parallel's infeed must be a list of functions [@f, ...]"},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  "
     "\"interpreter.run_parallel\"(%a) {programs = [[@main], [@main, @main]]} "
     ": (tensor<f32>) -> ()\n  func.return %a : tensor<f32>\n}\n",
     IA, "<input>:2:3:",
     "interpreter.run_parallel needs programs = [[@f, ...], ...]: one "
     "non-empty list of functions per replica, all of the same length"},
    {"func.func @main(%a: tensor<2x" QA0 ">) -> tensor<2x" QA0
     "> {\n  func.return %a : tensor<2x!quant.uniform<i8:f32:0, {0.5:0, "
     "0.5:1}>>\n}\n",
     IA, "<input>:2:15:",
     "use of value '%a' expects type tensor<2x!quant.uniform<i8:f32:0, {0.5:0, "
     "0.5:1}>> but it has type tensor<2x!quant.uniform<i8:f32:0, {0.5:0, "
     "0.25:1}>>"},
    {"func.func @main(%a: tensor<2x" QA0
     ">) -> tensor<2xi8> {\n  func.return %a : tensor<2xi8>\n}\n",
     IA, "<input>:2:15:",
     "use of value '%a' expects type tensor<2xi8> but it has type "
     "tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:1}>>"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %a "
     ": tensor<2xf16>\n}\n",
     IA, "<input>:2:15:",
     "use of value '%a' expects type tensor<2xf16> but it has type "
     "tensor<2xf32>"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %a "
     ": tensor<2x1xf32>\n}\n",
     IA, "<input>:2:15:",
     "use of value '%a' expects type tensor<2x1xf32> but it has type "
     "tensor<2xf32>"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  "
     "\"check.expect_serialized_eq\"(%a) {probe_id = \"p\", iter = \"x\"} : "
     "(tensor<2xf32>) -> ()\n  func.return %a : tensor<2xf32>\n}\n",
     IA, "<input>:2:3:", "iter must be an integer >= 0"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  "
     "\"check.expect_serialized_eq\"(%a, %a) {probe_id = \"p\"} : "
     "(tensor<2xf32>, tensor<2xf32>) -> ()\n  func.return %a : "
     "tensor<2xf32>\n}\n",
     IA, "<input>:2:3:", "check.expect_serialized_eq takes one operand, not 2"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  "
     "\"check.expect_serialized_eq\"(%a) {probe_id = 3 : i64} : "
     "(tensor<2xf32>) -> ()\n  func.return %a : tensor<2xf32>\n}\n",
     IA, "<input>:2:3:", "check.expect_serialized_eq needs a string probe_id"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  "
     "\"interpreter.run_parallel\"(%a) {programs = @main} : (tensor<2xf32>) -> "
     "()\n  func.return %a : tensor<2xf32>\n}\n",
     IA, "<input>:2:3:",
     "interpreter.run_parallel needs programs = [[@f, ...], ...]: one "
     "non-empty list of functions per replica, all of the same length"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  "
     "\"interpreter.run_parallel\"(%a) {programs = [[1]]} : (tensor<2xf32>) -> "
     "()\n  func.return %a : tensor<2xf32>\n}\n",
     IA, "<input>:2:3:",
     "interpreter.run_parallel needs programs = [[@f, ...], ...]: one "
     "non-empty list of functions per replica, all of the same length"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  "
     "\"interpreter.run_parallel\"(%a) {programs = [[]]} : (tensor<2xf32>) -> "
     "()\n  func.return %a : tensor<2xf32>\n}\n",
     IA, "<input>:2:3:",
     "interpreter.run_parallel needs programs = [[@f, ...], ...]: one "
     "non-empty list of functions per replica, all of the same length"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  "
     "\"interpreter.run_parallel\"(%a) {programs = [[@main]], infeed = [@main, "
     "2]} : (tensor<2xf32>) -> ()\n  func.return %a : tensor<2xf32>\n}\n",
     IA, "<input>:2:3:",
     "interpreter.run_parallel's infeed must be a list of functions [@f, ...]"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = "
     "\"interpreter.probe\"(%a) {probe_id = \"p\"} : (tensor<2xf32>) -> "
     "tensor<2xf16>\n  func.return %a : tensor<2xf32>\n}\n",
     IA,
     "<input>:2:8:", "interpreter.probe's result type must be its operand's"},
    {"func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {\n  func.return %a "
     ": tensor<?xf16>\n}\n",
     IA, "<input>:2:15:",
     "use of value '%a' expects type tensor<?xf16> but it has type "
     "tensor<?xf32>"},
};

TU_BAD_PROGS_TEST(test_ops, ops_cases)

TU_MAIN(NULL, NULL, cmocka_unit_test(test_ops))
