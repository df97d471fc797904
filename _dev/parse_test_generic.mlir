// Generic (mlir-opt --mlir-print-op-generic) modules and functions; every
// chunk must parse.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>, sym_name = "main", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>):
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_replicas = 1 : i32} : () -> ()
// -----
"builtin.module"() <{sym_name = "jit_g"}> ({
  "func.func"() ({
  ^bb0(%arg0: tensor<2xi32> loc("a"), %arg1: tensor<i32>):
    %0 = "func.call"(%arg0) <{callee = @helper}> : (tensor<2xi32>) -> tensor<2xi32>
    %1 = "func.call"(%0) {callee = @helper} : (tensor<2xi32>) -> tensor<2xi32>
    "func.return"(%1, %arg1) : (tensor<2xi32>, tensor<i32>) -> ()
  }) {arg_attrs = [{mhlo.sharding = "{replicated}"}, {}], function_type = (tensor<2xi32>, tensor<i32>) -> (tensor<2xi32>, tensor<i32>), res_attrs = [{jax.result_info = ""}, {}], sym_name = "main"} : () -> () loc("m")
  "func.func"() <{function_type = (tensor<2xi32>) -> tensor<2xi32>, sym_name = "helper", sym_visibility = "private"}> ({
  ^bb0(%x: tensor<2xi32>):
    %0 = stablehlo.multiply %x, %x : tensor<2xi32>
    func.return %0 : tensor<2xi32>
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>) -> tensor<f32>, sym_name = "decl", sym_visibility = "private"}> ({
  }) : () -> ()
  func.func @pretty_inside(%a: tensor<f32>) -> tensor<f32> {
    %0 = "func.call"(%a) <{callee = @decl}> : (tensor<f32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 3 : i32} : () -> ()
// -----
builtin.module @named attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%a: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.negate %a : tensor<f32>
    func.return %0 : tensor<f32>
  }
}
// -----
"func.func"() <{function_type = () -> (), sym_name = "top"}> ({
  "func.return"() : () -> ()
}) : () -> ()
// -----
// Operand types stated only partly, or only for the result: all fine.
func.func @mixed(%p: tensor<4xi1>, %a: tensor<4xf32>, %s: tensor<f32>, %i: tensor<i64>) -> tensor<4xf32> {
  %0 = stablehlo.select %p, %a, %a : tensor<4xi1>, tensor<4xf32>
  %1 = stablehlo.select %p, %a, %0 : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.clamp %s, %a, %s : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = stablehlo.compare LT, %a, %2, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %4 = stablehlo.iota dim = 0 : tensor<4xf32>
  %5 = stablehlo.complex %a, %4 : tensor<4xcomplex<f32>>
  %6 = stablehlo.tuple %a, %s : tuple<tensor<4xf32>, tensor<f32>>
  %7 = stablehlo.get_tuple_element %6[1] : (tuple<tensor<4xf32>, tensor<f32>>) -> tensor<f32>
  %8 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %9 = stablehlo.reduce(%a init: %s) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %10:2 = stablehlo.while(%it = %i, %acc = %s) : tensor<i64>, tensor<f32>
   cond {
    %c = stablehlo.compare LT, %it, %it : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    stablehlo.return %it, %acc : tensor<i64>, tensor<f32>
  }
  %11 = stablehlo.convert %i : (tensor<i64>) -> tensor<f32>
  %12:2 = stablehlo.optimization_barrier %a, %i : tensor<4xf32>, tensor<i64>
  %13 = stablehlo.custom_call @foo(%a, %i) : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  check.expect_eq %a, %8 : tensor<4xf32>
  check.expect_eq_const %i, dense<0> : tensor<i64>
  check.expect_close %a, %1, max_ulp_difference = 2 : tensor<4xf32>, tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
// -----
"builtin.module"() ({
^bb0:
  "func.func"() <{arg_attrs = [{jax.arg_info = "x"}], function_type = (tensor<2x3xbf16>) -> (tensor<3x2xbf16>, tensor<i1>), res_attrs = [{}, {}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x3xbf16> loc("x")):
    %0 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xbf16>) -> tensor<3x2xbf16> loc(#loc1)
    %1 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %2 = "stablehlo.while"(%1) ({
    ^bb0(%c: tensor<i1>):
      "stablehlo.return"(%c) : (tensor<i1>) -> ()
    }, {
    ^bb0(%c: tensor<i1>):
      %n = "stablehlo.not"(%c) : (tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%n) : (tensor<i1>) -> ()
    }) : (tensor<i1>) -> tensor<i1>
    "func.return"(%0, %2) : (tensor<3x2xbf16>, tensor<i1>) -> ()
  }) : () -> () loc(#loc1)
}) {mhlo.frontend_attributes = {xla.sdy.meshes = "{}"}, mhlo.num_partitions = 1 : i32} : () -> () loc(#loc1)
#loc1 = loc("t.py":1:1)
// -----
builtin.module {
  "func.func"() <{function_type = (tuple<tensor<f32>, !stablehlo.token>) -> tuple<tensor<f32>, !stablehlo.token>, sym_name = "tup"}> ({
  ^bb0(%t: tuple<tensor<f32>, !stablehlo.token>):
    "func.return"(%t) : (tuple<tensor<f32>, !stablehlo.token>) -> ()
  }) : () -> ()
}
