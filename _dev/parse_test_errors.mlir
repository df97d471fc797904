// Every chunk must fail with a located error.
func.func @undefined() {
  %0 = stablehlo.add %x, %x : tensor<f32>
  func.return
}
// -----
func.func @redefined() {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  func.return
}
// -----
func.func @count() {
  %0 = stablehlo.constant dense<[1, 2, 3]> : tensor<4xi32>
  func.return
}
// -----
func.func @count2() {
  %0 = stablehlo.constant dense<[[1, 2], [3]]> : tensor<2x2xi32>
  func.return
}
// -----
func.func @range_ui4() {
  %0 = stablehlo.constant dense<[1, 16]> : tensor<2xui4>
  func.return
}
// -----
func.func @range_i4() {
  %0 = stablehlo.constant dense<-9> : tensor<i4>
  func.return
}
// -----
func.func @range_ui8() {
  %0 = stablehlo.constant dense<256> : tensor<ui8>
  func.return
}
// -----
func.func @unknown_op() {
  %0 = stablehlo.frobnicate %x : tensor<f32>
  func.return
}
// -----
func.func @unknown_generic() {
  %0 = "foo.bar"() : () -> tensor<f32>
  func.return
}
// -----
func.func @unknown_type(%a: tensor<4xf31>) {
  func.return
}
// -----
func.func @dynamic(%a: tensor<?x4xf32>) {
  func.return
}
// -----
func.func @rank(%a: tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1xf32>) {
  func.return
}
// -----
func.func @types(%a: tensor<f32>) {
  %0 = "stablehlo.add"(%a, %a) : (tensor<f32>) -> tensor<f32>
  func.return
}
// -----
func.func @results(%a: tensor<f32>) {
  %0, %1 = "stablehlo.add"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}
// -----
func.func @callee() {
  %0 = func.call @nowhere() : () -> tensor<f32>
  func.return
}
// -----
func.func @serialized() {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  check.expect_serialized_eq %0, probe_id = 7 : tensor<f32>
  func.return
}
// -----
func.func @hexsize() {
  %0 = stablehlo.constant dense<"0x0000803F00"> : tensor<2xf32>
  func.return
}
// -----
func.func @scope(%a: tensor<f32>) {
  %0 = "stablehlo.if"(%a) ({
    %in = stablehlo.add %a, %a : tensor<f32>
    stablehlo.return %in : tensor<f32>
  }, {
    stablehlo.return %in : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  func.return
}
// -----
func.func @unterminated() {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
// -----
func.func @f4range() {
  %0 = stablehlo.constant dense<7.0> : tensor<f4E2M1FN>
  func.return
}
// -----
func.func @dup() {
  func.return
}
func.func @dup() {
  func.return
}
// -----
func.func @overflow() {
  %0 = stablehlo.constant dense<99999999999999999999> : tensor<i64>
  func.return
}
// -----
func.func @use_single(%a: tensor<f32>) -> tensor<i32> {
  %0 = stablehlo.negate %a : tensor<i32>
  func.return %0 : tensor<i32>
}
// -----
func.func @use_fn(%a: tensor<f32>, %b: tensor<i32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
// -----
func.func @use_generic(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.abs"(%a) : (tensor<3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// -----
func.func @use_select(%p: tensor<2xi32>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.select %p, %a, %a : tensor<2xi1>, tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// -----
func.func @use_while(%i: tensor<i64>) -> tensor<i32> {
  %0 = stablehlo.while(%x = %i) : tensor<i32>
   cond {
    %c = stablehlo.compare LT, %x, %x : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    stablehlo.return %x : tensor<i32>
  }
  func.return %0 : tensor<i32>
}
// -----
func.func @use_reduce_init(%a: tensor<4xf32>, %s: tensor<f64>) -> tensor<f32> {
  %0 = stablehlo.reduce(%a init: %s) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
// -----
func.func @use_return(%a: tensor<f32>) -> tensor<f32> {
  func.return %a : tensor<f16>
}
// -----
func.func @use_result_index(%a: tensor<i32>) -> tensor<i32> {
  %0:2 = stablehlo.optimization_barrier %a, %a : tensor<i32>, tensor<i32>
  %1 = stablehlo.add %0#0, %0#1 : (tensor<i32>, tensor<i64>) -> tensor<i32>
  func.return %1 : tensor<i32>
}
// -----
func.func @use_tuple_elem(%a: tensor<f32>) -> tensor<f32> {
  %t = stablehlo.tuple %a, %a : tuple<tensor<f32>, tensor<f32>>
  %0 = stablehlo.get_tuple_element %t[0] : (tuple<tensor<f32>, tensor<i1>>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
// -----
func.func @use_check(%a: tensor<2xf32>, %b: tensor<2xf32>) {
  check.expect_eq %a, %b : tensor<2xf64>
  func.return
}
// -----
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<f32>) -> tensor<f32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<i32>):
    "func.return"(%arg0) : (tensor<i32>) -> ()
  }) : () -> ()
}) : () -> ()
// -----
"func.func"() <{function_type = (tensor<f32>, tensor<f32>) -> tensor<f32>, sym_name = "count"}> ({
^bb0(%arg0: tensor<f32>):
  "func.return"(%arg0) : (tensor<f32>) -> ()
}) : () -> ()
// -----
"func.func"() ({
  "func.return"() : () -> ()
}) {sym_name = "untyped"} : () -> ()
// -----
"func.func"() <{function_type = () -> ()}> ({
  "func.return"() : () -> ()
}) : () -> ()
// -----
"func.func"() <{function_type = () -> (), sym_name = "d"}> ({
  "func.return"() : () -> ()
}) : () -> ()
"func.func"() <{function_type = () -> (), sym_name = "d"}> ({
  "func.return"() : () -> ()
}) : () -> ()
// -----
"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "f", sym_visibility = 1}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
// -----
"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "f"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) : (tensor<f32>) -> ()
// -----
func.func @call_type(%a: tensor<f32>) -> tensor<f32> {
  %0 = "func.call"(%a) <{callee = @call_type}> : (tensor<i8>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
