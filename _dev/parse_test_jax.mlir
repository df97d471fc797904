#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 4 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {jax.arg_info = "x", mhlo.sharding = "{replicated}"} loc("x"), %arg1: tensor<2x3xbf16> loc(#loc1)) -> (tensor<4xf32> {jax.result_info = ""}, tensor<f32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32> loc(#loc7)
    %1 = stablehlo.maximum %arg0, %0 : tensor<4xf32> loc(fused[#loc3, "foo"(#loc4)])
    %2 = call @relu(%1) : (tensor<4xf32>) -> tensor<4xf32> loc(callsite(#loc5 at #loc6))
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %4:2 = stablehlo.reduce(%2 init: %cst), (%2 init: %cst) across dimensions = [0] : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
     reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<f32>, %d: tensor<f32>)  {
      %s = stablehlo.add %a, %c : tensor<f32>
      %m = stablehlo.maximum %b, %d : tensor<f32>
      stablehlo.return %s, %m : tensor<f32>, tensor<f32>
    }
    %5 = stablehlo.add %4#0, %4#1 : tensor<f32>
    %6 = stablehlo.iota dim = 0 : tensor<4xi32>
    %7 = stablehlo.convert %6 : (tensor<4xi32>) -> tensor<4xf32>
    %8 = stablehlo.compare  GT, %7, %0,  FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %9 = stablehlo.select %8, %7, %0 : tensor<4xi1>, tensor<4xf32>
    %cst2 = stablehlo.constant dense<1.0> : tensor<bf16>
    %10 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
    %11 = stablehlo.pad %10, %cst2, low = [0, 1], high = [1, 0], interior = [0, 0] : (tensor<3x2xbf16>, tensor<bf16>) -> tensor<4x3xbf16>
    %12 = stablehlo.custom_call @Sharding(%9) {backend_config = "", mhlo.sharding = "{replicated}", api_version = 2 : i32, operand_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf32>) -> tensor<4xf32>
    %13 = stablehlo.dot_general %12, %12, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %14 = stablehlo.concatenate %12, %9, dim = 0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
    %15 = stablehlo.slice %14 [1:7:2] : (tensor<8xf32>) -> tensor<3xf32>
    %16 = stablehlo.reverse %15, dims = [0] : tensor<3xf32>
    %17 = stablehlo.broadcast %16, sizes = [2] : (tensor<3xf32>) -> tensor<2x3xf32>
    %18 = stablehlo.clamp %cst, %17, %cst : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    %19 = stablehlo.reshape %18 : (tensor<2x3xf32>) -> tensor<6xf32>
    %20 = stablehlo.bitcast_convert %19 : (tensor<6xf32>) -> tensor<6xi32>
    %21 = "stablehlo.compare"(%cst, %cst) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %22 = "stablehlo.dot_general"(%12, %12) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %iterArg:2 = stablehlo.while(%iterArg_0 = %cst, %iterArg_1 = %13) : tensor<f32>, tensor<f32>
     cond {
      %c = stablehlo.compare  LT, %iterArg_0, %iterArg_1 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %z = stablehlo.add %iterArg_0, %cst : tensor<f32>
      stablehlo.return %z, %iterArg_1 : tensor<f32>, tensor<f32>
    }
    %23 = "stablehlo.custom_call"(%12) {call_target_name = "foo", has_side_effect = true, output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], scale = 0x3F800000 : f32, weird = [?, 4], conv = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>} : (tensor<4xf32>) -> tensor<4xf32>
    %24 = stablehlo.constant dense<[[0x7FC00000, -0.0], [inf, -inf]]> : tensor<2x2xf32>
    %25 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
    %26 = stablehlo.constant dense<"0x0000803F"> : tensor<2xf32>
    %27 = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.5e+00)]> : tensor<2xcomplex<f32>>
    %28 = stablehlo.constant dense<[-8, 7, -0x7, 0xF]> : tensor<4xi4>
    %29 = stablehlo.constant dense<[0, 15]> : tensor<2xui4>
    %30 = stablehlo.constant dense<[true, false, 1, 0]> : tensor<4xi1>
    %31 = stablehlo.constant dense<[448.0, -448.0, 0.1, 500.0]> : tensor<4xf8E4M3FN>
    %32 = stablehlo.constant dense<[6.0, -0.5, 0.25, 5.0]> : tensor<4xf4E2M1FN>
    %33 = stablehlo.constant dense<[57344.0, 1.0e+00, 65536.0, 1.0e-7]> : tensor<4xf8E5M2>
    %34 = stablehlo.constant dense<[]> : tensor<0xf32>
    %35 = stablehlo.constant dense<65504.0> : tensor<f16>
    %36 = stablehlo.constant dense<[18446744073709551615, 0]> : tensor<2xui64>
    %37 = stablehlo.constant dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>
    %38 = stablehlo.constant dense<3> : tensor<2x3x!quant.uniform<i8<-127:127>:f32, 0.5:-20>>
    %tok = stablehlo.after_all : !stablehlo.token
    %t = stablehlo.tuple %cst, %13 : tuple<tensor<f32>, tensor<f32>>
    %g = stablehlo.get_tuple_element %t[1] : (tuple<tensor<f32>, tensor<f32>>) -> tensor<f32>
    %r = stablehlo.reduce_precision %cst, format = e5m10 : tensor<f32>
    return %2, %3 : tensor<4xf32>, tensor<f32> loc(#loc)
  } loc(#loc)
  func.func private @relu(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<true> : tensor<i1>
    %0 = "stablehlo.if"(%c) ({
      stablehlo.return %arg0 : tensor<4xf32>
    }, {
      "stablehlo.return"(%arg0) : (tensor<4xf32>) -> ()
    }) : (tensor<i1>) -> tensor<4xf32>
    func.return %0 : tensor<4xf32>
  }
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("/tmp/x.py":10:0)
#loc7 = loc("jit(f)/jit(main)/max"(#loc3))
