// A 2-layer MLP in the shape jax.jit(...).lower(...).as_text() emits:
//   x = iota + 0.5 * row;  h = relu(x @ w1 + b1);  y = h @ w2 + b2
//   returns y and the row sums of y.
// main takes no arguments (weights and input are constants), so
//   build/xrt run examples/mlp.mlir
// runs it as is.
#loc1 = loc("mlp.py":9:0)
#loc2 = loc("mlp.py":10:0)
module @jit_mlp attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<2x2xf32> {jax.result_info = "[0]"}, tensor<2xf32> {jax.result_info = "[1]"}) {
    %0 = stablehlo.iota dim = 1 : tensor<2x4xf32> loc(#loc4)
    %1 = stablehlo.iota dim = 0 : tensor<2x4xf32> loc(#loc4)
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32> loc(#loc)
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32> loc(#loc5)
    %3 = stablehlo.multiply %1, %2 : tensor<2x4xf32> loc(#loc5)
    %4 = stablehlo.add %0, %3 : tensor<2x4xf32> loc(#loc6)
    %cst_0 = stablehlo.constant dense<[[1.000000e-01, -2.000000e-01, 3.000000e-01], [4.000000e-01, 5.000000e-01, -6.000000e-01], [-0.699999988, 8.000000e-01, 0.899999976], [1.000000e+00, -1.100000e+00, 1.200000e+00]]> : tensor<4x3xf32> loc(#loc)
    %cst_1 = stablehlo.constant dense<[1.000000e-01, 2.000000e-01, -3.000000e-01]> : tensor<3xf32> loc(#loc)
    %5 = stablehlo.dot_general %4, %cst_0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc(#loc7)
    %6 = stablehlo.broadcast_in_dim %cst_1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32> loc(#loc8)
    %7 = stablehlo.add %5, %6 : tensor<2x3xf32> loc(#loc8)
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %8 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x3xf32> loc(#loc9)
    %9 = stablehlo.maximum %7, %8 : tensor<2x3xf32> loc(#loc9)
    %cst_3 = stablehlo.constant dense<[[5.000000e-01, -5.000000e-01], [1.000000e+00, 2.500000e-01], [-7.500000e-01, 1.500000e+00]]> : tensor<3x2xf32> loc(#loc)
    %cst_4 = stablehlo.constant dense<[5.000000e-02, -5.000000e-02]> : tensor<2xf32> loc(#loc)
    %10 = stablehlo.dot_general %9, %cst_3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32> loc(#loc10)
    %11 = stablehlo.broadcast_in_dim %cst_4, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32> loc(#loc11)
    %12 = stablehlo.add %10, %11 : tensor<2x2xf32> loc(#loc11)
    %13 = stablehlo.reduce(%12 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32> loc(#loc12)
    return %12, %13 : tensor<2x2xf32>, tensor<2xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("mlp.py":12:0)
#loc4 = loc("jit(mlp)/jit(main)/iota"(#loc1))
#loc5 = loc("jit(mlp)/jit(main)/mul"(#loc1))
#loc6 = loc("jit(mlp)/jit(main)/add"(#loc1))
#loc7 = loc("jit(mlp)/jit(main)/dot_general"(#loc2))
#loc8 = loc("jit(mlp)/jit(main)/add"(#loc2))
#loc9 = loc("jit(mlp)/jit(main)/max"(#loc2))
#loc10 = loc("jit(mlp)/jit(main)/dot_general"(#loc3))
#loc11 = loc("jit(mlp)/jit(main)/add"(#loc3))
#loc12 = loc("jit(mlp)/jit(main)/reduce_sum"(#loc3))
