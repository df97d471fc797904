/* test_verify_errors.c - the verifier's per-op checks (src/core/verify.c,
 * verify_index.c, verify_types.c) that the op tests leave untaken: for
 * each op a table of programs breaking one constraint of the StableHLO
 * spec (operand and result types and shapes, attribute lists of the wrong
 * length or kind, duplicate or out-of-range dimensions, region signatures,
 * call and composite arity, gather/scatter dimension numbers, window
 * attributes, quantized types), each with its status, the op's
 * "file:line:col:" and the message naming the broken rule. */
#include "test_bad_progs.h"

/* Program builders: each takes the attributes and types to vary. */
#define GA(dn, ss, at, it, ot)                                          \
  "func.func @main(%a: " at ", %i: " it ") -> " ot                      \
  " {\n  %0 = \"stablehlo.gather\"(%a, %i) {dimension_numbers = "       \
  "#stablehlo.gather<" dn ">, slice_sizes = array<i64: " ss ">} : (" at \
  ", " it ") -> " ot "\n  func.return %0 : " ot "\n}\n"
#define GDN                                                                \
  "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], " \
  "index_vector_dim = 1"
#define SC(dn, at, it, ut, body)                                              \
  "func.func @main(%a: " at ", %i: " it ", %u: " ut ") -> " at                \
  " {\n  %0 = \"stablehlo.scatter\"(%a, %i, %u) ({\n  ^bb0(%x: tensor<i32>, " \
  "%y: tensor<i32>):\n    " body                                              \
  "\n  }) {scatter_dimension_numbers = #stablehlo.scatter<" dn ">} : (" at    \
  ", " it ", " ut ") -> " at "\n  func.return %0 : " at "\n}\n"
#define SDN                                                        \
  "update_window_dims = [1], scatter_dims_to_operand_dims = [0], " \
  "index_vector_dim = 1"
#define SRET "stablehlo.return %y : tensor<i32>"
#define DS(ss, at, i1, i2, ot)                                         \
  "func.func @main(%a: " at ", %r: " i1 ", %c: " i2 ") -> " ot         \
  " {\n  %0 = \"stablehlo.dynamic_slice\"(%a, %r, %c) {slice_sizes = " \
  "array<i64: " ss ">} : (" at ", " i1 ", " i2 ") -> " ot              \
  "\n  func.return %0 : " ot "\n}\n"
#define DUS(at, ut, i1, i2, ot)                                             \
  "func.func @main(%a: " at ", %u: " ut ", %r: " i1 ", %c: " i2 ") -> " ot  \
  " {\n  %0 = stablehlo.dynamic_update_slice %a, %u, %r, %c : (" at ", " ut \
  ", " i1 ", " i2 ") -> " ot "\n  func.return %0 : " ot "\n}\n"
#define RW(attrs, at, it, ot, bt)                                       \
  "func.func @main(%a: " at ", %z: " it ") -> " ot                      \
  " {\n  %0 = \"stablehlo.reduce_window\"(%a, %z) ({\n  ^bb0(%x: " bt   \
  ", %y: " bt "):\n    %m = stablehlo.maximum %x, %y : " bt             \
  "\n    stablehlo.return %m : " bt "\n  }) {" attrs "} : (" at ", " it \
  ") -> " ot "\n  func.return %0 : " ot "\n}\n"
#define SAS(attrs, at, st, zt, ct)                                           \
  "func.func @main(%a: " at ", %s: " st ", %z: " zt ") -> " at               \
  " {\n  %0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) ({\n  ^bb0(%x: "  \
  "tensor<f32>, %y: tensor<f32>):\n    %c = stablehlo.compare GE, %x, %y : " \
  "(tensor<f32>, tensor<f32>) -> " ct "\n    stablehlo.return %c : " ct      \
  "\n  }, {\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    %s2 = "          \
  "stablehlo.add %x, %y : tensor<f32>\n    stablehlo.return %s2 : "          \
  "tensor<f32>\n  }) {" attrs "} : (" at ", " st ", " zt ") -> " at          \
  "\n  func.return %0 : " at "\n}\n"
#define DBID(bd, at, dt, ot)                                              \
  "func.func @main(%a: " at ", %d: " dt ") -> " ot                        \
  " {\n  %0 = \"stablehlo.dynamic_broadcast_in_dim\"(%a, %d) "            \
  "{broadcast_dimensions = array<i64: " bd ">} : (" at ", " dt ") -> " ot \
  "\n  func.return %0 : " ot "\n}\n"
#define DPAD(at, vt, lt, ot)                                                \
  "func.func @main(%a: " at ", %v: " vt ", %l: " lt ", %h: " lt ", %n: " lt \
  ") -> " ot " {\n  %0 = stablehlo.dynamic_pad %a, %v, %l, %h, %n : (" at   \
  ", " vt ", " lt ", " lt ", " lt ") -> " ot "\n  func.return %0 : " ot     \
  "\n}\n"
#define QN(q)                                                               \
  "func.func @main(%a: tensor<2x" q ">) -> tensor<2x" q                     \
  "> {\n  %0 = \"stablehlo.negate\"(%a) : (tensor<2x" q ">) -> tensor<2x" q \
  ">\n  func.return %0 : tensor<2x" q ">\n}\n"
#define Q8 "!quant.uniform<i8:f32, 0.5:0>"
#define Q16 "!quant.uniform<i16:f32, 0.5:0>"
#define QA0 "!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>"
#define QA1 "!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>"

static const tu_bad_prog core_cases[] = {
    {U1("\"stablehlo.abs\"(%a)", "tensor<2xcomplex<f32>>",
        "tensor<2xcomplex<f32>>"),
     IA, "<input>:2:8:",
     "stablehlo.abs: result of abs of a complex tensor must be its real "
     "counterpart"},
    {U1("\"stablehlo.abs\"(%a)", "tensor<2xcomplex<f32>>", "tensor<3xf32>"), IA,
     "<input>:2:8:",
     "stablehlo.abs: result of abs of a complex tensor must be its real "
     "counterpart"},
    {U1("\"stablehlo.negate\"(%a)", "tuple<tensor<f32>>", "tensor<f32>"), IA,
     "<input>:2:8:", "stablehlo.negate: operand 0 must be a tensor"},
    {B2("\"stablehlo.compare\"(%a, %b) {comparison_direction = "
        "#stablehlo<comparison_direction XX>}",
        "tensor<2xf32>", "tensor<2xf32>", "tensor<2xi1>"),
     IA, "<input>:2:8:",
     "stablehlo.compare: comparison_direction must be one of EQ, NE, GE, GT, "
     "LE, LT"},
    {B2("\"stablehlo.compare\"(%a, %b) {comparison_direction = 3 : i64}",
        "tensor<2xf32>", "tensor<2xf32>", "tensor<2xi1>"),
     IA, "<input>:2:8:",
     "stablehlo.compare: comparison_direction must be one of EQ, NE, GE, GT, "
     "LE, LT"},
    {B2("\"stablehlo.compare\"(%a, %b) {comparison_direction = "
        "#stablehlo<comparison_direction EQ>}",
        "tensor<2xf32>", "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.compare: result must be i1 of the operands' shape"},
    {T3("\"stablehlo.select\"(%a, %b, %c)", "tensor<2xi1>", "tensor<2xf32>",
        "tensor<2xf16>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.select: on_false type differs from result type: tensor<2xf16> "
     "vs tensor<2xf32>"},
    {T3("\"stablehlo.select\"(%a, %b, %c)", "tensor<3xi1>", "tensor<2xf32>",
        "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.select: pred must be i1, a scalar or of the result's shape"},
    {T3("\"stablehlo.clamp\"(%a, %b, %c)", "tensor<3xf32>", "tensor<2xf32>",
        "tensor<f32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.clamp: min must be a scalar or of the operand's shape and "
     "type"},
    {T3("\"stablehlo.clamp\"(%a, %b, %c)", "tensor<f32>", "tensor<2xf32>",
        "tensor<2xf16>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.clamp: max must be a scalar or of the operand's shape and "
     "type"},
    {U1("\"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64: "
        "0, 1>}",
        "tensor<2xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.broadcast_in_dim: broadcast_dimensions has 2 entries for an "
     "operand of rank 1"},
    {U1("\"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64: "
        "5>}",
        "tensor<2xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.broadcast_in_dim: broadcast_dimensions: dimension 5 is out of "
     "range for rank 2"},
    {U1("\"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = 1 : i64}",
        "tensor<2xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.broadcast_in_dim: attribute 'broadcast_dimensions' must be a "
     "list of integers"},
    {U1("\"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = array<i64: "
        "0, 0>}",
        "tensor<2x2xf32>", "tensor<2x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.broadcast_in_dim: broadcast_dimensions: dimension 0 appears "
     "twice"},
    {U1("\"stablehlo.transpose\"(%a) {permutation = array<i64: 0>}",
        "tensor<2x3xf32>", "tensor<3x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.transpose: permutation must have one entry per dimension"},
    {U1("\"stablehlo.transpose\"(%a) {permutation = array<i64: 1, 0>}",
        "tensor<2x3xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:", "stablehlo.transpose: result dimension 0 must be 3"},
    {U1("\"stablehlo.slice\"(%a) {start_indices = array<i64: 0>, limit_indices "
        "= array<i64: 2>, strides = array<i64: 1>}",
        "tensor<2x3xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.slice: start, limit and strides need one entry per dimension"},
    {U1("\"stablehlo.slice\"(%a) {start_indices = array<i64: 2>, limit_indices "
        "= array<i64: 1>, strides = array<i64: 1>}",
        "tensor<3xf32>", "tensor<1xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.slice: dimension 0: slice 2:1:1 is invalid for size 3"},
    {U1("\"stablehlo.slice\"(%a) {start_indices = array<i64: 0>, limit_indices "
        "= array<i64: 3>, strides = array<i64: 0>}",
        "tensor<3xf32>", "tensor<1xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.slice: dimension 0: slice 0:3:0 is invalid for size 3"},
    {U1("\"stablehlo.slice\"(%a) {start_indices = array<i64: 0>, limit_indices "
        "= array<i64: 4>}",
        "tensor<3xf32>", "tensor<4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.slice: dimension 0: slice 0:4:1 is invalid for size 3"},
    {U1("\"stablehlo.slice\"(%a) {start_indices = array<i64: 0>, limit_indices "
        "= array<i64: 3>, strides = array<i64: 2>}",
        "tensor<3xf32>", "tensor<3xf32>"),
     IA,
     "<input>:2:8:", "stablehlo.slice: result dimension 0 has the wrong size"},
    {U1("\"stablehlo.slice\"(%a) {start_indices = 0 : i64, limit_indices = "
        "array<i64: 3>}",
        "tensor<3xf32>", "tensor<3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.slice: attribute 'start_indices' must be a list of integers"},
    {B2("\"stablehlo.dot\"(%a, %b)", "tensor<2x2x2xf32>", "tensor<2xf32>",
        "tensor<2x2xf32>"),
     IA, "<input>:2:8:", "stablehlo.dot: operands must be of rank 1 or 2"},
    {B2("\"stablehlo.dot\"(%a, %b)", "tensor<2xf32>", "tensor<3xf32>",
        "tensor<f32>"),
     IA, "<input>:2:8:",
     "stablehlo.dot: lhs dimension 0 (2) and rhs dimension 0 (3) must match"},
    {U1("\"stablehlo.get_dimension_size\"(%a) {dimension = 3 : i64}",
        "tensor<2xf32>", "tensor<i32>"),
     IA, "<input>:2:8:",
     "stablehlo.get_dimension_size: dimension attribute is missing or out of "
     "range"},
    {U1("\"stablehlo.get_dimension_size\"(%a) {dimension = 0 : i64}",
        "tensor<2xf32>", "tensor<i64>"),
     IA, "<input>:2:8:",
     "stablehlo.get_dimension_size: result must be tensor<i32>"},
    {B2("\"stablehlo.concatenate\"(%a, %b) {dimension = 0 : i64}",
        "tensor<2xf32>", "tensor<2x1xf32>", "tensor<4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.concatenate: operand 1 differs in rank or element type"},
    {B2("\"stablehlo.concatenate\"(%a, %b) {dimension = 0 : i64}",
        "tensor<2x2xf32>", "tensor<2x1xf32>", "tensor<4x2xf32>"),
     IA,
     "<input>:2:8:", "stablehlo.concatenate: operand 1 differs in dimension 1"},
    {B2("\"stablehlo.concatenate\"(%a, %b) {dimension = 0 : i64}",
        "tensor<2xf32>", "tensor<2xf32>", "tensor<5xf32>"),
     IA, "<input>:2:8:", "stablehlo.concatenate: result dimension 0 must be 4"},
    {B2("\"stablehlo.concatenate\"(%a, %b) {dimension = 2 : i64}",
        "tensor<2xf32>", "tensor<2xf32>", "tensor<4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.concatenate: dimension attribute is missing or out of range"},
    {B2("\"stablehlo.pad\"(%a, %b) {edge_padding_low = array<i64: 1>, "
        "edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>}",
        "tensor<2xf32>", "tensor<f16>", "tensor<4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.pad: padding value must be a scalar of the operand's element "
     "type"},
    {B2("\"stablehlo.pad\"(%a, %b) {edge_padding_low = array<i64: 1, 1>, "
        "edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>}",
        "tensor<2xf32>", "tensor<f32>", "tensor<4xf32>"),
     IA,
     "<input>:2:8:", "stablehlo.pad: padding needs one entry per dimension"},
    {B2("\"stablehlo.pad\"(%a, %b) {edge_padding_low = array<i64: 1>, "
        "edge_padding_high = array<i64: 1>, interior_padding = array<i64: -1>}",
        "tensor<2xf32>", "tensor<f32>", "tensor<4xf32>"),
     IA, "<input>:2:8:", "stablehlo.pad: interior padding is negative"},
    {B2("\"stablehlo.pad\"(%a, %b) {edge_padding_low = array<i64: 1>, "
        "edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>}",
        "tensor<2xf32>", "tensor<f32>", "tensor<5xf32>"),
     IA, "<input>:2:8:", "stablehlo.pad: result dimension 0 must be 4"},
    {B2("\"stablehlo.pad\"(%a, %b) {edge_padding_low = array<i64: -5>, "
        "edge_padding_high = array<i64: 1>}",
        "tensor<2xf32>", "tensor<f32>", "tensor<0xf32>"),
     IA, "<input>:2:8:", "stablehlo.pad: result dimension 0 must be -2"},
    {U1("\"stablehlo.reverse\"(%a) {dimensions = array<i64: 0, 0>}",
        "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.reverse: dimensions: dimension 0 appears twice"},
    {U1("\"stablehlo.reverse\"(%a) {dimensions = array<i64: 3>}",
        "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.reverse: dimensions: dimension 3 is out of range for rank 1"},
    {B2("\"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = "
        "#stablehlo.dot<lhs_contracting_dimensions = [1], "
        "rhs_contracting_dimensions = []>}",
        "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dot_general: lhs and rhs need as many batching and contracting "
     "dimensions"},
    {B2("\"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = "
        "#stablehlo.dot<lhs_contracting_dimensions = [1], "
        "rhs_contracting_dimensions = [1]>}",
        "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dot_general: contracting dimension sizes differ: lhs dimension "
     "1 is 3, rhs dimension 1 is 2"},
    {B2("\"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = "
        "#stablehlo.dot<lhs_contracting_dimensions = [1, 1], "
        "rhs_contracting_dimensions = [0, 0]>}",
        "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dot_general: lhs dimensions: dimension 1 appears twice"},
    {B2("\"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = "
        "#stablehlo.dot<lhs_contracting_dimensions = [1], "
        "rhs_contracting_dimensions = [0]>}",
        "tensor<2x3xf32>", "tensor<3x2xf16>", "tensor<2x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dot_general: lhs and rhs element types differ (f32 vs f16)"},
    {B2("\"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = "
        "#stablehlo.dot<lhs_contracting_dimensions = [7], "
        "rhs_contracting_dimensions = [0]>}",
        "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dot_general: lhs dimensions: dimension 7 is out of range for "
     "rank 2"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<f32> {\n  %z = "
     "stablehlo.constant dense<0.0> : tensor<f32>\n  %0 = "
     "\"stablehlo.reduce\"(%a, %z) ({\n  ^bb0(%x: tensor<f32>):\n    "
     "\"stablehlo.return\"(%x) : (tensor<f32>) -> ()\n  }) {dimensions = "
     "array<i64: 0>} : (tensor<2xf32>, tensor<f32>) -> tensor<f32>\n  "
     "func.return %0 : tensor<f32>\n}\n",
     IA, "<input>:3:8:",
     "stablehlo.reduce: body region takes 1 argument(s), expected 2"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<f32> {\n  %z = "
     "stablehlo.constant dense<0.0> : tensor<f32>\n  %0 = "
     "\"stablehlo.reduce\"(%a, %z) ({\n  ^bb0(%x: tensor<f32>, %y: "
     "tensor<f32>):\n    \"stablehlo.return\"(%x, %y) : (tensor<f32>, "
     "tensor<f32>) -> ()\n  }) {dimensions = array<i64: 0>} : (tensor<2xf32>, "
     "tensor<f32>) -> tensor<f32>\n  func.return %0 : tensor<f32>\n}\n",
     IA,
     "<input>:3:8:", "stablehlo.reduce: body region must return 1 value(s)"},
    {"func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<f32> {\n "
     " %z = stablehlo.constant dense<0.0> : tensor<f32>\n  %0:2 = "
     "\"stablehlo.reduce\"(%a, %b, %z, %z) ({\n  ^bb0(%x: tensor<f32>, %y: "
     "tensor<f32>, %u: tensor<f32>, %w: tensor<f32>):\n    "
     "\"stablehlo.return\"(%x, %y) : (tensor<f32>, tensor<f32>) -> ()\n  }) "
     "{dimensions = array<i64: 0>} : (tensor<2xf32>, tensor<3xf32>, "
     "tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)\n  func.return "
     "%0#0 : tensor<f32>\n}\n",
     IA, "<input>:3:10:", "stablehlo.reduce: inputs differ in shape"},
    {"func.func @main(%a: tensor<2x3xf32>) -> tensor<2xf32> {\n  %z = "
     "stablehlo.constant dense<0.0> : tensor<f32>\n  %0 = "
     "\"stablehlo.reduce\"(%a, %z) ({\n  ^bb0(%x: tensor<f32>, %y: "
     "tensor<f32>):\n    \"stablehlo.return\"(%x) : (tensor<f32>) -> ()\n  }) "
     "{dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> "
     "tensor<3xf32>\n  func.return %0 : tensor<3xf32>\n}\n",
     IA, "<input>:3:8:", "stablehlo.reduce: result 0 has the wrong shape"},
    {"func.func @main(%a: tensor<2xf32>) -> tensor<f32> {\n  %z = "
     "stablehlo.constant dense<0> : tensor<i32>\n  %0 = "
     "\"stablehlo.reduce\"(%a, %z) ({\n  ^bb0(%x: tensor<f32>, %y: "
     "tensor<f32>):\n    \"stablehlo.return\"(%x) : (tensor<f32>) -> ()\n  }) "
     "{dimensions = array<i64: 0>} : (tensor<2xf32>, tensor<i32>) -> "
     "tensor<f32>\n  func.return %0 : tensor<f32>\n}\n",
     IA, "<input>:3:8:",
     "stablehlo.reduce: init value 0 must be a scalar of result 0's element "
     "type"},
    {"func.func @main(%a: tensor<i32>) -> tensor<i32> {\n  %0 = "
     "stablehlo.while(%it = %a) : tensor<i32>\n  cond {\n    stablehlo.return "
     "%it : tensor<i32>\n  } do {\n    stablehlo.return %it : tensor<i32>\n  "
     "}\n  func.return %0 : tensor<i32>\n}\n",
     IA, "<input>:2:8:", "stablehlo.while: cond region must return tensor<i1>"},
    {"func.func @f(%x: tensor<f32>) -> tensor<f32> {\n  func.return %x : "
     "tensor<f32>\n}\nfunc.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %0 "
     "= func.call @f(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n  "
     "func.return %0 : tensor<f32>\n}\n",
     IA, "<input>:5:8:", "func.call: @f takes 1 argument(s) and returns 1"},
    {"func.func @f(%x: tensor<f32>) -> tensor<f32> {\n  func.return %x : "
     "tensor<f32>\n}\nfunc.func @main(%a: tensor<f32>) -> tensor<f16> {\n  %0 "
     "= func.call @f(%a) : (tensor<f32>) -> tensor<f16>\n  func.return %0 : "
     "tensor<f16>\n}\n",
     IA, "<input>:5:8:", "func.call: result 0 has the wrong type for @f"},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %0 = func.call "
     "@nope(%a) : (tensor<f32>) -> tensor<f32>\n  func.return %0 : "
     "tensor<f32>\n}\n",
     IA, "<input>:2:8:", "call to unknown function @nope"},
    {"func.func @g(%x: tensor<f32>, %y: tensor<f32>) -> tensor<f32> {\n  "
     "func.return %x : tensor<f32>\n}\nfunc.func @main(%a: tensor<f32>) -> "
     "tensor<f32> {\n  %0 = \"stablehlo.composite\"(%a) {name = \"my.op\", "
     "decomposition = @g} : (tensor<f32>) -> tensor<f32>\n  func.return %0 : "
     "tensor<f32>\n}\n",
     IA, "<input>:5:8:",
     "stablehlo.composite: decomposition @g takes 2 argument(s) and returns 1"},
    {"func.func @main() -> tensor<2xf32> {\n  %0 = \"stablehlo.constant\"() "
     "{value = dense<1.0> : tensor<3xf32>} : () -> tensor<2xf32>\n  "
     "func.return %0 : tensor<2xf32>\n}\n",
     IA,
     "<input>:2:8:", "stablehlo.constant: value type differs from result type"},
    {"func.func @main() -> tensor<2xf32> {\n  %0 = \"stablehlo.constant\"() "
     "{value = 1.0 : f32} : () -> tensor<2xf32>\n  func.return %0 : "
     "tensor<2xf32>\n}\n",
     IA, "<input>:2:8:", "stablehlo.constant: missing dense attribute 'value'"},
    {U1("\"stablehlo.bitcast_convert\"(%a)", "tensor<2xf32>", "tensor<2xi16>"),
     IA, "<input>:2:8:",
     "stablehlo.bitcast_convert: shapes do not fit a bitcast between f32 and "
     "i16"},
    {U1("\"stablehlo.bitcast_convert\"(%a)", "tensor<2x2xi16>",
        "tensor<3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.bitcast_convert: shapes do not fit a bitcast between i16 and "
     "f32"},
    {U1("\"stablehlo.bitcast_convert\"(%a)", "tensor<3xf32>", "tensor<3x2xi8>"),
     IA, "<input>:2:8:",
     "stablehlo.bitcast_convert: shapes do not fit a bitcast between f32 and "
     "i8"},
    {U1("\"stablehlo.iota\"(%a) {iota_dimension = 0 : i64}", "tensor<2xf32>",
        "tensor<2xf32>"),
     IA, "<input>:2:8:", "stablehlo.iota: expects 0 operand(s), got 1"},
    {B2("\"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = "
        "#stablehlo.dot<lhs_contracting_dimensions = 1, "
        "rhs_contracting_dimensions = [0]>}",
        "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dot_general: lhs_contracting_dimensions must be a list of "
     "integers"},
    {B2("\"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = "
        "#stablehlo.dot<lhs_batching_dimensions = [0, 0, 0, 0, 0, 0, 0, 0, 0], "
        "rhs_batching_dimensions = [0, 0, 0, 0, 0, 0, 0, 0, 0], "
        "lhs_contracting_dimensions = [1, 1, 1, 1, 1, 1, 1, 1], "
        "rhs_contracting_dimensions = [0, 0, 0, 0, 0, 0, 0, 0]>}",
        "tensor<2x3xf32>", "tensor<3x2xf32>", "tensor<2x2xf32>"),
     IA, "<input>:2:8:", "stablehlo.dot_general: too many dimensions"},
    {U1("\"stablehlo.negate\"(%a)", "tensor<f32>", "tuple<tensor<f32>>"), IA,
     "<input>:2:8:", "stablehlo.negate: result 0 must be a tensor"},
    {"func.func @main() -> tensor<f32> {\n  %0 = \"stablehlo.reduce\"() ({\n  "
     "^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    \"stablehlo.return\"(%x) : "
     "(tensor<f32>) -> ()\n  }) {dimensions = array<i64: 0>} : () -> "
     "tensor<f32>\n  func.return %0 : tensor<f32>\n}\n",
     IA, "<input>:2:8:", "stablehlo.reduce: expects 2 operand(s), got 0"},
};

TU_BAD_PROGS_TEST(test_core, core_cases)

static const tu_bad_prog index_cases[] = {
    {GA("offset_dims = [1, 1], collapsed_slice_dims = [0], start_index_map = "
        "[0], index_vector_dim = 1",
        "1, 2", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: offset_dims, collapsed_slice_dims and "
     "operand_batching_dims must cover the operand's 2 dimensions"},
    {GA(GDN, "1, 2", "tensor<3x2xi32>", "tensor<4x1xf32>", "tensor<4x2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: indices must have an integer element type"},
    {GA(GDN, "1, 2", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: operand and result element types differ"},
    {GA(GDN, "1", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x2xi32>"), IA,
     "<input>:2:8:",
     "stablehlo.gather: slice_sizes needs one entry per operand dimension (2)"},
    {GA(GDN, "1, 3", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x3xi32>"),
     IA,
     "<input>:2:8:", "stablehlo.gather: slice_sizes[1] = 3 must be in [0, 2]"},
    {GA("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1, operand_batching_dims = [1], "
        "start_indices_batching_dims = [0]",
        "1, 1", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x1xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: offset_dims, collapsed_slice_dims and "
     "operand_batching_dims must cover the operand's 2 dimensions"},
    {GA("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1, operand_batching_dims = [1], "
        "start_indices_batching_dims = []",
        "1, 2", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: offset_dims, collapsed_slice_dims and "
     "operand_batching_dims must cover the operand's 2 dimensions"},
    {GA("offset_dims = [], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1, operand_batching_dims = [1], "
        "start_indices_batching_dims = [0]",
        "1, 1", "tensor<3x2xi32>", "tensor<3x1xi32>", "tensor<3xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: batching dimension sizes differ: operand 2 vs indices "
     "3"},
    {GA("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 5",
        "1, 2", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: index_vector_dim 5 is out of range for indices of rank "
     "2"},
    {SC("update_window_dims = [1], scatter_dims_to_operand_dims = [0], "
        "index_vector_dim = 1",
        "tensor<5xi32>", "tensor<4x1xi32>", "tensor<4x2xf32>", SRET),
     IA, "<input>:2:8:",
     "stablehlo.scatter: updates 0 and input 0 differ in element type"},
    {SC(SDN, "tensor<5xi32>", "tensor<4x1xi32>", "tensor<4x2xi32>",
        "%c = stablehlo.convert %y : (tensor<i32>) -> tensor<f32>\n    "
        "stablehlo.return %c : tensor<f32>"),
     IA, "<input>:2:8:",
     "stablehlo.scatter: update_computation must map scalars of the inputs' "
     "element types"},
    {"func.func @main(%a: tensor<5xi32>, %i: tensor<4x1xi32>, %u: "
     "tensor<4x2xi32>) -> tensor<5xi32> {\n  %0 = \"stablehlo.scatter\"(%a, "
     "%i, %u) ({\n  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n    "
     "stablehlo.return %y : tensor<i32>\n  }) : (tensor<5xi32>, "
     "tensor<4x1xi32>, tensor<4x2xi32>) -> tensor<5xi32>\n  func.return %0 : "
     "tensor<5xi32>\n}\n",
     IA, "<input>:2:8:",
     "stablehlo.scatter: missing attribute 'scatter_dimension_numbers'"},
    {"func.func @main(%a: tensor<5xi32>, %b: tensor<5xi32>, %i: "
     "tensor<4x1xi32>, %u: tensor<4x2xi32>, %v: tensor<4x3xi32>) -> "
     "tensor<5xi32> {\n  %0:2 = \"stablehlo.scatter\"(%a, %b, %i, %u, %v) ({\n "
     " ^bb0(%x: tensor<i32>, %x2: tensor<i32>, %y: tensor<i32>, %y2: "
     "tensor<i32>):\n    stablehlo.return %y, %y2 : tensor<i32>, tensor<i32>\n "
     " }) {scatter_dimension_numbers = #stablehlo.scatter<" SDN
     ">} : (tensor<5xi32>, tensor<5xi32>, tensor<4x1xi32>, tensor<4x2xi32>, "
     "tensor<4x3xi32>) -> (tensor<5xi32>, tensor<5xi32>)\n  func.return %0#0 : "
     "tensor<5xi32>\n}\n",
     IA, "<input>:2:10:", "stablehlo.scatter: updates differ in shape"},
    {"func.func @main(%a: tensor<5xi32>, %b: tensor<5xf32>, %i: "
     "tensor<4x1xi32>, %u: tensor<4x2xi32>, %v: tensor<4x2xi32>) -> "
     "tensor<5xi32> {\n  %0:2 = \"stablehlo.scatter\"(%a, %b, %i, %u, %v) ({\n "
     " ^bb0(%x: tensor<i32>, %x2: tensor<f32>, %y: tensor<i32>, %y2: "
     "tensor<f32>):\n    stablehlo.return %y, %y2 : tensor<i32>, tensor<f32>\n "
     " }) {scatter_dimension_numbers = #stablehlo.scatter<" SDN
     ">} : (tensor<5xi32>, tensor<5xf32>, tensor<4x1xi32>, tensor<4x2xi32>, "
     "tensor<4x2xi32>) -> (tensor<5xi32>, tensor<5xf32>)\n  func.return %0#0 : "
     "tensor<5xi32>\n}\n",
     IA, "<input>:2:10:",
     "stablehlo.scatter: updates 1 and input 1 differ in element type"},
    {DS("2, 2", "tensor<3x3xf32>", "tensor<i32>", "tensor<i64>",
        "tensor<2x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dynamic_slice: start indices must share one element type"},
    {DS("2", "tensor<3x3xf32>", "tensor<i32>", "tensor<i32>",
        "tensor<2x2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dynamic_slice: slice_sizes needs one entry per operand "
     "dimension (2)"},
    {DS("2, 2", "tensor<3x3xf32>", "tensor<i32>", "tensor<i32>",
        "tensor<2x2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.dynamic_slice: result must have the operand's element type and "
     "rank"},
    {DS("2, 2", "tensor<3x3xf32>", "tensor<i32>", "tensor<i32>",
        "tensor<2x3xf32>"),
     IA,
     "<input>:2:8:", "stablehlo.dynamic_slice: result dimension 1 must be 2"},
    {DS("2, 4", "tensor<3x3xf32>", "tensor<i32>", "tensor<i32>",
        "tensor<2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dynamic_slice: slice_sizes[1] = 4 must be in [0, 3]"},
    {DUS("tensor<3x3xf32>", "tensor<2x2xi32>", "tensor<i32>", "tensor<i32>",
         "tensor<3x3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dynamic_update_slice: update must have the operand's element "
     "type and rank"},
    {DUS("tensor<3x3xf32>", "tensor<2x4xf32>", "tensor<i32>", "tensor<i32>",
         "tensor<3x3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.dynamic_update_slice: update dimension 1 (size 4) exceeds the "
     "operand's (3)"},
    {RW("window_dimensions = array<i64: 2>", "tensor<5xf32>", "tensor<f32>",
        "tensor<4x1xf32>", "tensor<f32>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_window: result 0 must have the inputs' rank"},
    {RW("window_dimensions = array<i64: 2>", "tensor<5xf32>", "tensor<i32>",
        "tensor<4xf32>", "tensor<f32>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_window: init value 0 must be a scalar of result 0's "
     "element type"},
    {RW("window_dimensions = array<i64: 2>, window_dilations = array<i64: "
        "4611686018427387904>",
        "tensor<5xf32>", "tensor<f32>", "tensor<4xf32>", "tensor<f32>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_window: window_dilations[0] = 4611686018427387904 must "
     "be at most 2^40"},
    {RW("window_dimensions = array<i64: 2>, base_dilations = array<i64: "
        "4611686018427387904>",
        "tensor<5xf32>", "tensor<f32>", "tensor<4xf32>", "tensor<f32>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_window: base_dilations[0] = 4611686018427387904 must be "
     "at most 2^40"},
    {SAS("window_dimensions = array<i64: 2>, window_strides = array<i64: 2>",
         "tensor<4xf32>", "tensor<2xf32>", "tensor<f16>", "tensor<i1>"),
     IA, "<input>:2:8:",
     "stablehlo.select_and_scatter: source and init_value must have the "
     "operand's element type (init_value a scalar)"},
    {SAS("window_dimensions = array<i64: 2>, window_strides = array<i64: 2>",
         "tensor<4xf32>", "tensor<2x1xf32>", "tensor<f32>", "tensor<i1>"),
     IA, "<input>:2:8:",
     "stablehlo.select_and_scatter: source must have the operand's rank"},
    {SAS("window_dimensions = array<i64: 2>, window_strides = array<i64: 2>",
         "tensor<4xf32>", "tensor<2xf32>", "tensor<f32>", "tensor<i32>"),
     IA, "<input>:2:8:",
     "stablehlo.select_and_scatter: select region must return tensor<i1>"},
    {DBID("0, 0", "tensor<2x1xi32>", "tensor<3xi32>", "tensor<2x2x3xi32>"), IA,
     "<input>:2:8:",
     "stablehlo.dynamic_broadcast_in_dim: broadcast_dimensions: dimension 0 "
     "appears twice"},
    {DBID("0, 2", "tensor<2x1xi32>", "tensor<2xi32>", "tensor<2x2x3xi32>"), IA,
     "<input>:2:8:",
     "stablehlo.dynamic_broadcast_in_dim: output_dimensions must be a 1-d "
     "integer tensor of 3 elements"},
    {DBID("0, 2", "tensor<2x1xi32>", "tensor<3xf32>", "tensor<2x2x3xi32>"), IA,
     "<input>:2:8:",
     "stablehlo.dynamic_broadcast_in_dim: output_dimensions must be a 1-d "
     "integer tensor of 3 elements"},
    {DPAD("tensor<3xi8>", "tensor<i16>", "tensor<1xi64>", "tensor<5xi8>"), IA,
     "<input>:2:8:",
     "stablehlo.dynamic_pad: padding value must be a scalar of the operand's "
     "element type"},
    {DPAD("tensor<3xi8>", "tensor<i8>", "tensor<1xi64>", "tensor<5x1xi8>"), IA,
     "<input>:2:8:",
     "stablehlo.dynamic_pad: result must have the operand's rank"},
    {DPAD("tensor<3xi8>", "tensor<i8>", "tensor<2xi64>", "tensor<5xi8>"), IA,
     "<input>:2:8:",
     "stablehlo.dynamic_pad: edge_padding_low must be a 1-d integer tensor of "
     "1 elements"},
    {RW("window_dimensions = array<i64: 1099511627776>, window_dilations = "
        "array<i64: 2>",
        "tensor<5xf32>", "tensor<f32>", "tensor<4xf32>", "tensor<f32>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_window: window of dimension 0 is too large"},
    {GA("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1, operand_batching_dims = [0]",
        "1, 2", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: offset_dims, collapsed_slice_dims and "
     "operand_batching_dims must cover the operand's 2 dimensions"},
    {GA("offset_dims = [], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1, operand_batching_dims = [1], "
        "start_indices_batching_dims = [1]",
        "1, 1", "tensor<3x2xi32>", "tensor<2x1xi32>", "tensor<2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: index_vector_dim must not be a batching dimension"},
    {GA("offset_dims = [], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1, operand_batching_dims = [1]",
        "1, 1", "tensor<3x2xi32>", "tensor<2x1xi32>", "tensor<2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: operand_batching_dims and start_indices_batching_dims "
     "differ in length"},
    {GA(GDN, "1, 2", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x2x1xi32>"),
     IA, "<input>:2:8:", "stablehlo.gather: result must have rank 2"},
    {DBID("0, 2", "tensor<2x1xi32>", "tensor<3x1xi32>", "tensor<2x2x3xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.dynamic_broadcast_in_dim: output_dimensions must be a 1-d "
     "integer tensor of 3 elements"},
    {"func.func @main(%a: tensor<2x1xi32>, %d: tensor<3xi32>) -> "
     "tensor<2x2x3xi32> {\n  %0 = \"stablehlo.dynamic_broadcast_in_dim\"(%a, "
     "%d) {broadcast_dimensions = array<i64: 0, 2>, known_expanding_dimensions "
     "= array<i64: 1>, known_nonexpanding_dimensions = array<i64: 1>} : "
     "(tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x2x3xi32>\n  func.return %0 "
     ": tensor<2x2x3xi32>\n}\n",
     IA, "<input>:2:8:",
     "stablehlo.dynamic_broadcast_in_dim: known dimensions: dimension 1 "
     "appears twice"},
    {GA("offset_dims = 1, collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1",
        "1, 2", "tensor<3x2xi32>", "tensor<4x1xi32>", "tensor<4x2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.gather: offset_dims must be a list of integers"},
    {"func.func @main(%a: tensor<5xi32>, %i: tensor<4x1xi32>, %u: "
     "tensor<4x2xi32>) -> tensor<5xi32> {\n  %0 = \"stablehlo.scatter\"(%a, "
     "%i, %u) ({\n  ^bb0(%x: tensor<i32>):\n    stablehlo.return %x : "
     "tensor<i32>\n  }) {scatter_dimension_numbers = #stablehlo.scatter<" SDN
     ">} : (tensor<5xi32>, tensor<4x1xi32>, tensor<4x2xi32>) -> "
     "tensor<5xi32>\n  func.return %0 : tensor<5xi32>\n}\n",
     IA, "<input>:2:8:",
     "stablehlo.scatter: update_computation region takes 1 argument(s), "
     "expected 2"},
    {"func.func @main(%a: tensor<4xf32>, %s: tensor<2xf32>, %z: tensor<f32>) "
     "-> tensor<4xf32> {\n  %0 = \"stablehlo.select_and_scatter\"(%a, %s, %z) "
     "({\n  ^bb0(%x: tensor<f32>):\n    %c = stablehlo.compare GE, %x, %x : "
     "(tensor<f32>, tensor<f32>) -> tensor<i1>\n    stablehlo.return %c : "
     "tensor<i1>\n  }, {\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    %s2 = "
     "stablehlo.add %x, %y : tensor<f32>\n    stablehlo.return %s2 : "
     "tensor<f32>\n  }) {window_dimensions = array<i64: 2>, window_strides = "
     "array<i64: 2>} : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> "
     "tensor<4xf32>\n  func.return %0 : tensor<4xf32>\n}\n",
     IA, "<input>:2:8:",
     "stablehlo.select_and_scatter: select region takes 1 argument(s), "
     "expected 2"},
};

TU_BAD_PROGS_TEST(test_index, index_cases)

static const tu_bad_prog types_cases[] = {
    {U1("\"stablehlo.negate\"(%a)",
        "tensor<2x!quant.uniform<i8:f32:3, {0.5:0, 0.5:0}>>",
        "tensor<2x!quant.uniform<i8:f32:3, {0.5:0, 0.5:0}>>"),
     IA, "<input>:2:8:",
     "stablehlo.negate: result: quantization dimension 3 is out of range for "
     "rank 1 (C12)"},
    {U1("\"stablehlo.uniform_quantize\"(%a)", "tensor<2xi32>",
        "tensor<2x" Q8 ">"),
     IA, "<input>:2:8:",
     "stablehlo.uniform_quantize: operand must be a float or quantized tensor, "
     "not i32"},
    {U1("\"stablehlo.uniform_quantize\"(%a)", "tensor<2xf32>",
        "tensor<3x" Q8 ">"),
     IA, "<input>:2:8:",
     "stablehlo.uniform_quantize: operand and result shapes differ"},
    {U1("\"stablehlo.uniform_quantize\"(%a)", "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.uniform_quantize: result must be a quantized tensor"},
    {U1("\"stablehlo.uniform_quantize\"(%a)", "tensor<2xf16>",
        "tensor<2x" Q8 ">"),
     IA, "<input>:2:8:",
     "stablehlo.uniform_quantize: result expressed type f32 must be f16"},
    {U1("\"stablehlo.uniform_dequantize\"(%a)", "tensor<2x" Q8 ">",
        "tensor<2x" Q8 ">"),
     IA, "<input>:2:8:",
     "stablehlo.uniform_dequantize: result must not be quantized"},
    {U1("\"stablehlo.uniform_dequantize\"(%a)", "tensor<2x" Q8 ">",
        "tensor<3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.uniform_dequantize: operand and result shapes differ"},
    {U1("\"stablehlo.uniform_dequantize\"(%a)", "tensor<2xf32>",
        "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.uniform_dequantize: operand must be a quantized tensor"},
    {U1("\"stablehlo.uniform_dequantize\"(%a)", "tensor<2x" Q8 ">",
        "tensor<2xf16>"),
     IA, "<input>:2:8:",
     "stablehlo.uniform_dequantize: result element type f16 must be the "
     "expressed type f32"},
    {U1("\"stablehlo.reduce_precision\"(%a) {exponent_bits = 5 : i32, "
        "mantissa_bits = 2 : i32}",
        "tensor<2x2x" QA0 ">", "tensor<2x2x" QA0 ">"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_precision: operand must be a float or per-tensor "
     "quantized tensor, not i8"},
    {U1("\"stablehlo.reduce_precision\"(%a) {exponent_bits = 5 : i32, "
        "mantissa_bits = 2 : i32}",
        "tensor<2x" Q8 ">",
        "tensor<2x!quant.uniform<i8:f32:3, {0.5:0, 0.5:0}>>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_precision: result: quantization dimension 3 is out of "
     "range for rank 1 (C12)"},
    {U1("\"stablehlo.reduce_precision\"(%a) {exponent_bits = 5 : i32}",
        "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_precision: needs integer attributes 'exponent_bits' and "
     "'mantissa_bits'"},
    {U1("\"stablehlo.reduce_precision\"(%a) {exponent_bits = 0 : i32, "
        "mantissa_bits = 2 : i32}",
        "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_precision: exponent_bits must be >= 1, got 0"},
    {U1("\"stablehlo.reduce_precision\"(%a) {exponent_bits = 5 : i32, "
        "mantissa_bits = -1 : i32}",
        "tensor<2xf32>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_precision: mantissa_bits must be >= 0, got -1"},
    {U1("\"stablehlo.reduce_precision\"(%a) {exponent_bits = 5 : i32, "
        "mantissa_bits = 2 : i32}",
        "tensor<2xi32>", "tensor<2xi32>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_precision: operand must be a float or per-tensor "
     "quantized tensor, not i32"},
    {B2("\"stablehlo.add\"(%a, %b)", "tensor<2x" Q8 ">", "tensor<2x" Q8 ">",
        "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.add: result type differs from operand type: "
     "tensor<2x!quant.uniform<i8:f32, 0.5:0>> vs tensor<2xf32>"},
    {B2("\"stablehlo.compare\"(%a, %b) {comparison_direction = "
        "#stablehlo<comparison_direction EQ>}",
        "tensor<2x" Q8 ">", "tensor<2x" Q8 ">", "tensor<2x" Q8 ">"),
     IA, "<input>:2:8:",
     "stablehlo.compare: result must be i1 of the operands' shape"},
    {B2("\"stablehlo.add\"(%a, %b)", "tensor<2x" Q8 ">", "tensor<2x" Q16 ">",
        "tensor<2x" Q8 ">"),
     IA, "<input>:2:8:",
     "stablehlo.add: operand types differ: tensor<2x!quant.uniform<i8:f32, "
     "0.5:0>> vs tensor<2x!quant.uniform<i16:f32, 0.5:0>>"},
    {B2("\"stablehlo.add\"(%a, %b)", "tensor<2x" Q8 ">", "tensor<2xi8>",
        "tensor<2x" Q8 ">"),
     IA, "<input>:2:8:",
     "stablehlo.add: operand types differ: tensor<2x!quant.uniform<i8:f32, "
     "0.5:0>> vs tensor<2xi8>"},
    {B2("\"stablehlo.add\"(%a, %b)", "tensor<2x2x" QA0 ">",
        "tensor<2x2x" QA0 ">", "tensor<2x2x" QA1 ">"),
     IA, "<input>:2:8:",
     "stablehlo.add: operand 0 is quantized along dimension 0, the result "
     "along 1"},
    {B2("\"stablehlo.add\"(%a, %b)", "tensor<2x" Q8 ">", "tensor<3x" Q8 ">",
        "tensor<2x" Q8 ">"),
     IA, "<input>:2:8:",
     "stablehlo.add: operand types differ: tensor<2x!quant.uniform<i8:f32, "
     "0.5:0>> vs tensor<3x!quant.uniform<i8:f32, 0.5:0>>"},
    {U1("\"stablehlo.is_finite\"(%a)", "tensor<2xf32>", "tensor<2xf32>"), IA,
     "<input>:2:8:",
     "stablehlo.is_finite: result must be tensor of i1 with the operand's "
     "shape"},
    {U1("\"stablehlo.is_finite\"(%a)", "tensor<2xcomplex<f32>>",
        "tensor<2xi1>"),
     IA, "<input>:2:8:", "stablehlo.is_finite: operand must be a float tensor"},
    {U1("\"stablehlo.real\"(%a)", "tensor<2xi32>", "tensor<2xi32>"), IA,
     "<input>:2:8:",
     "stablehlo.real: operand must be a float or complex tensor, not i32"},
    {U1("\"stablehlo.imag\"(%a)", "tensor<2xcomplex<f64>>", "tensor<2xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.imag: result must be tensor of f64 with the operand's shape"},
    {B2("\"stablehlo.complex\"(%a, %b)", "tensor<2xf32>", "tensor<2xf32>",
        "tensor<2xcomplex<f64>>"),
     IA, "<input>:2:8:",
     "stablehlo.complex: result must be tensor of complex<f32> with the "
     "operands' shape"},
    {B2("\"stablehlo.complex\"(%a, %b)", "tensor<2xf16>", "tensor<2xf16>",
        "tensor<2xcomplex<f32>>"),
     IA, "<input>:2:8:", "stablehlo.complex: operands must be f32 or f64"},
    {B2("\"stablehlo.complex\"(%a, %b)", "tensor<2xf32>", "tensor<3xf32>",
        "tensor<2xcomplex<f32>>"),
     IA, "<input>:2:8:",
     "stablehlo.complex: operand types differ: tensor<2xf32> vs tensor<3xf32>"},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  func.return %a, %a "
     ": tensor<f32>, tensor<f32>\n}\n",
     IA, "<input>:2:3:",
     "func.return: @main returns 2 value(s) but is declared with 1"},
    {"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  func.return %a : "
     "tensor<f16>\n}\n",
     IA, "<input>:2:15:",
     "use of value '%a' expects type tensor<f16> but it has type tensor<f32>"},
    {QN("!quant.uniform<i8<-200:100>:f32, 0.5>"), IA, "<input>:2:8:",
     "stablehlo.negate: result: storage range [-200, 100] does not fit i8 (C3: "
     "min_value(storage_type) <= storage_min < storage_max <= "
     "max_value(storage_type))"},
    {QN("!quant.uniform<i8<5:5>:f32, 0.5>"), IA, "<input>:2:8:",
     "stablehlo.negate: result: storage range [5, 5] does not fit i8 (C3: "
     "min_value(storage_type) <= storage_min < storage_max <= "
     "max_value(storage_type))"},
    {QN("!quant.uniform<i8:f32, 0.0>"), IA, "<input>:2:8:",
     "stablehlo.negate: result: scale 0 must be positive and finite (C5, C6)"},
    {QN("!quant.uniform<i8:f32, 0.5:200>"), IA, "<input>:2:8:",
     "stablehlo.negate: result: zero point 200 is outside the storage range "
     "[-128, 127] (C7)"},
    {QN("!quant.uniform<u16<0:70000>:f32, 0.5>"), IA, "<input>:2:8:",
     "stablehlo.negate: result: storage range [0, 70000] does not fit ui16 "
     "(C3: min_value(storage_type) <= storage_min < storage_max <= "
     "max_value(storage_type))"},
    {QN("!quant.uniform<i8:f32:0, {0.5, 0.5, 0.5}>"), IA, "<input>:2:8:",
     "stablehlo.negate: result: 3 scales for quantization dimension 0 of size "
     "2 (C13)"},
    {QN("!quant.uniform<i8:f32, -0.5>"), IA, "<input>:2:8:",
     "stablehlo.negate: result: scale -0.5 must be positive and finite (C5, "
     "C6)"},
    {QN("!quant.uniform<i8:f32, 0x7FF0000000000000>"), IA, "<input>:2:8:",
     "stablehlo.negate: result: scale inf must be positive and finite (C5, "
     "C6)"},
    {U1("\"stablehlo.reduce_precision\"(%a) {exponent_bits = 5 : i32, "
        "mantissa_bits = 2 : i32}",
        "tensor<2xf32>", "tensor<2xf16>"),
     IA, "<input>:2:8:",
     "stablehlo.reduce_precision: result type differs from operand type: "
     "tensor<2xf32> vs tensor<2xf16>"},
    {"func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>, %b: "
     "tensor<2xi8>) -> tensor<2x!quant.uniform<i8:f32, 0.5>> {\n  %0 = "
     "\"stablehlo.add\"(%a, %b) : (tensor<2x!quant.uniform<i8:f32, 0.5>>, "
     "tensor<2xi8>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>\n  func.return %0 "
     ": tensor<2x!quant.uniform<i8:f32, 0.5>>\n}\n",
     IA, "<input>:2:8:",
     "stablehlo.add: operand types differ: tensor<2x!quant.uniform<i8:f32, "
     "0.5:0>> vs tensor<2xi8>"},
};

TU_BAD_PROGS_TEST(test_types, types_cases)

TU_MAIN(NULL, NULL, cmocka_unit_test(test_core), cmocka_unit_test(test_index),
        cmocka_unit_test(test_types))
