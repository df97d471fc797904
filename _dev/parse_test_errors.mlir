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
  check.expect_serialized_eq %0, probe_id = "x" : tensor<f32>
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
