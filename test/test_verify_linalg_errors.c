/* test_verify_linalg_errors.c - the verifier of the linear-algebra ops
 * (src/core/verify_linalg.c): for convolution, fft, triangular_solve,
 * cholesky, the batch_norm ops, rng, rng_bit_generator and
 * chlo.ragged_dot, one table of programs that break one rule each (a
 * list of the wrong length, an invalid enum, a non-boolean flag, group
 * counts, element types, batch and result dimensions, ragged dimension
 * numbers), each with the status, the "file:line:col:" of the op and the
 * message the StableHLO spec's constraint calls for.  test_ops_linalg.c
 * covers the valid programs and a few errors; these are the rest.  A
 * second table breaks the compact convolution syntax that
 * src/core/normalize.c rewrites (dim_numbers strings, window pads). */
#include "test_bad_progs.h"

/* Program builders: each takes the attributes and types to vary. */
#define CONV_DN \
  "dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>"
#define CONV(attrs, wt, rt)                                   \
  "func.func @main(%x: tensor<1x4x6xf32>, %w: " wt ") -> " rt \
  " {\n  %0 = \"stablehlo.convolution\"(%x, %w) {" attrs      \
  "} : (tensor<1x4x6xf32>, " wt ") -> " rt "\n  func.return %0 : " rt "\n}\n"
#define FFT(ty, len, ti, to)                                            \
  "func.func @main(%x: " ti ") -> " to                                  \
  " {\n  %0 = stablehlo.fft %x, type = " ty ", length = " len " : (" ti \
  ") -> " to "\n  func.return %0 : " to "\n}\n"
#define TS(attrs, at, bt)                                                \
  "func.func @main(%a: " at ", %b: " bt ") -> " bt                       \
  " {\n  %0 = \"stablehlo.triangular_solve\"(%a, %b) {" attrs "} : (" at \
  ", " bt ") -> " bt "\n  func.return %0 : " bt "\n}\n"
#define TSA                                                               \
  "left_side = true, lower = true, unit_diagonal = false, transpose_a = " \
  "#stablehlo<transpose NO_TRANSPOSE>"
#define BNT(attrs, xt, st, bt)                                         \
  "func.func @main(%x: " xt ", %s: " st ", %b: " bt ") -> " xt         \
  " {\n  %0:3 = \"stablehlo.batch_norm_training\"(%x, %s, %b) {" attrs \
  "} : (" xt ", " st ", " bt ") -> (" xt ", " st ", " bt               \
  ")\n  func.return %0#0 : " xt "\n}\n"
#define RNG(dist, at, bt, st, rt)                                       \
  "func.func @main(%a: " at ", %b: " bt ", %s: " st ") -> " rt          \
  " {\n  %0 = stablehlo.rng %a, %b, %s, distribution = " dist " : (" at \
  ", " bt ", " st ") -> " rt "\n  func.return %0 : " rt "\n}\n"
#define RBG(alg, st, ot)                                                    \
  "func.func @main(%s: " st ") -> " ot                                      \
  " {\n  %0:2 = stablehlo.rng_bit_generator %s, algorithm = " alg " : (" st \
  ") -> (" st ", " ot ")\n  func.return %0#1 : " ot "\n}\n"
#define RD(dn, lt, rt, gt, ot)                                                \
  "func.func @main(%l: " lt ", %r: " rt ", %g: " gt ") -> " ot                \
  " {\n  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers " \
  "= #chlo.ragged_dot<" dn ">} : (" lt ", " rt ", " gt ") -> " ot             \
  "\n  func.return %0 : " ot "\n}\n"
#define RDN(lb, rb, lc, rc, lr, rg)                                         \
  "lhs_batching_dimensions = " lb ", rhs_batching_dimensions = " rb         \
  ", lhs_contracting_dimensions = " lc ", rhs_contracting_dimensions = " rc \
  ", lhs_ragged_dimensions = " lr ", rhs_group_dimensions = " rg
#define CONVP(dn, win, wt, rt)                                        \
  "func.func @main(%x: tensor<1x4x6xf32>, %w: " wt ") -> " rt         \
  " {\n  %0 = stablehlo.convolution(%x, %w) dim_numbers = " dn        \
  ", window = {" win                                                  \
  "} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : " \
  "(tensor<1x4x6xf32>, " wt ") -> " rt "\n  func.return %0 : " rt "\n}\n"

static const tu_bad_prog linalg_cases[] = {
    {CONV(CONV_DN ", window_strides = array<i64: 1, 1>", "tensor<2x4x3xf32>",
          "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: window_strides must have 1 entries, not 2"},
    {CONV("dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, o, 0]->[b, f, 0]>",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: dimension numbers lack a batch/feature letter"},
    {CONV("dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, b, 0]>",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: dimension numbers lack a batch/feature letter"},
    {CONV(CONV_DN ", padding = dense<[1, 1]> : tensor<2xi64>",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: result spatial dimension 2 must be 6 (the number "
     "of windows), not 4"},
    {CONV(CONV_DN ", padding = dense<[[-100, 0]]> : tensor<1x2xi64>",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: result spatial dimension 2 must be 0 (the number "
     "of windows), not 4"},
    {CONV(CONV_DN ", feature_group_count = 0 : i64", "tensor<2x4x3xf32>",
          "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: feature_group_count and batch_group_count must be "
     "positive"},
    {CONV(CONV_DN ", batch_group_count = 2 : i64", "tensor<2x4x3xf32>",
          "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: input batch size 1 is not a multiple of "
     "batch_group_count 2"},
    {CONV(CONV_DN ", feature_group_count = 2 : i64", "tensor<3x2x3xf32>",
          "tensor<1x3x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: kernel output feature size 3 is not a multiple of "
     "the group count"},
    {CONV(CONV_DN, "tensor<2x4x3xf16>", "tensor<1x2x4xf32>"), IA,
     "<input>:2:8:",
     "stablehlo.convolution: lhs and rhs element types differ (f32 vs f16)"},
    {CONV(CONV_DN ", precision_config = [#stablehlo<precision DEFAULT>]",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: precision_config must have 2 entries"},
    {CONV(CONV_DN, "tensor<2x4x3xf32>", "tensor<2x2x4xf32>"), IA,
     "<input>:2:8:",
     "stablehlo.convolution: result batch size must be 1, not 2"},
    {CONV(CONV_DN, "tensor<2x4x3xf32>", "tensor<1x3x4xf32>"), IA,
     "<input>:2:8:",
     "stablehlo.convolution: result feature size must be 2, not 3"},
    {CONV(CONV_DN ", lhs_dilation = array<i64: 0>", "tensor<2x4x3xf32>",
          "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: lhs_dilation[0] = 0 is out of range"},
    {FFT("FFT", "[]", "tensor<4xcomplex<f32>>", "tensor<4xcomplex<f32>>"), IA,
     "<input>:2:8:", "stablehlo.fft: fft_length must have 1 to 3 entries"},
    {FFT("FFT", "[1, 1, 1, 4]", "tensor<1x1x1x4xcomplex<f32>>",
         "tensor<1x1x1x4xcomplex<f32>>"),
     IA, "<input>:2:8:", "stablehlo.fft: fft_length must have 1 to 3 entries"},
    {FFT("FFT", "[2, 4]", "tensor<4xcomplex<f32>>", "tensor<4xcomplex<f32>>"),
     IA, "<input>:2:8:",
     "stablehlo.fft: operand rank 1 is below size(fft_length) 2"},
    {FFT("FFT", "[4]", "tensor<4xf32>", "tensor<4xcomplex<f32>>"), IA,
     "<input>:2:8:",
     "stablehlo.fft: element types f32 -> complex<f32> do not fit fft_type "
     "FFT"},
    {FFT("FFT", "[4]", "tensor<4xcomplex<f32>>", "tensor<1x4xcomplex<f32>>"),
     IA, "<input>:2:8:", "stablehlo.fft: operand and result ranks differ"},
    {FFT("IRFFT", "[8]", "tensor<4xcomplex<f32>>", "tensor<8xf32>"), IA,
     "<input>:2:8:", "stablehlo.fft: IRFFT operand's last dimension must be 5"},
    {FFT("IRFFT", "[8]", "tensor<5xcomplex<f64>>", "tensor<8xf32>"), IA,
     "<input>:2:8:",
     "stablehlo.fft: element types complex<f64> -> f32 do not fit fft_type "
     "IRFFT"},
    {FFT("FOO", "[8]", "tensor<8xcomplex<f32>>", "tensor<8xcomplex<f32>>"), IA,
     "<input>:2:8:", "stablehlo.fft: 'FOO' is not a valid fft_type"},
    {TS(TSA, "tensor<3x3xf32>", "tensor<3x1xf64>"), IA, "<input>:2:8:",
     "stablehlo.triangular_solve: a and b element types differ"},
    {TS(TSA, "tensor<3x3xi32>", "tensor<3x1xi32>"), IA, "<input>:2:8:",
     "stablehlo.triangular_solve: element type i32 is not floating-point, "
     "complex or per-tensor quantized"},
    {TS(TSA, "tensor<3xf32>", "tensor<3xf32>"), IA, "<input>:2:8:",
     "stablehlo.triangular_solve: a and b must have the same rank >= 2"},
    {TS(TSA, "tensor<2x3x3xf32>", "tensor<3x3x1xf32>"), IA, "<input>:2:8:",
     "stablehlo.triangular_solve: batch dimension 0 of a and b differ"},
    {TS(TSA, "tensor<3x3xf32>", "tensor<2x1xf32>"), IA, "<input>:2:8:",
     "stablehlo.triangular_solve: dimension 0 of b is 2, expected 3 for "
     "left_side = true"},
    {TS("left_side = false, lower = true, unit_diagonal = false, transpose_a = "
        "#stablehlo<transpose NO_TRANSPOSE>",
        "tensor<3x3xf32>", "tensor<3x1xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.triangular_solve: dimension 1 of b is 1, expected 3 for "
     "left_side = false"},
    {TS("left_side = \"yes\", lower = true, unit_diagonal = false, transpose_a "
        "= #stablehlo<transpose NO_TRANSPOSE>",
        "tensor<3x3xf32>", "tensor<3x1xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.triangular_solve: attribute 'left_side' must be a boolean"},
    {TS("left_side = true, lower = true, unit_diagonal = false, transpose_a = "
        "#stablehlo<transpose SIDEWAYS>",
        "tensor<3x3xf32>", "tensor<3x1xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.triangular_solve: 'SIDEWAYS' is not a valid transpose_a"},
    {TS("left_side = true, lower = true, unit_diagonal = false",
        "tensor<3x3xf32>", "tensor<3x1xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.triangular_solve: missing enum attribute 'transpose_a'"},
    {"func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n  %0 = "
     "\"stablehlo.cholesky\"(%a) {lower = true} : (tensor<2x3xf32>) -> "
     "tensor<2x3xf32>\n  func.return %0 : tensor<2x3xf32>\n}\n",
     IA, "<input>:2:8:",
     "stablehlo.cholesky: a must be square in its last two dimensions"},
    {"func.func @main(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {\n  %0 = "
     "\"stablehlo.cholesky\"(%a) {lower = 2.0 : f32} : (tensor<3x3xf32>) -> "
     "tensor<3x3xf32>\n  func.return %0 : tensor<3x3xf32>\n}\n",
     IA,
     "<input>:2:8:", "stablehlo.cholesky: attribute 'lower' must be a boolean"},
    {BNT("feature_index = 1 : i64", "tensor<2x3xf32>", "tensor<3xf32>",
         "tensor<3xf32>"),
     IA, "<input>:2:10:",
     "stablehlo.batch_norm_training: missing float attribute 'epsilon'"},
    {BNT("epsilon = 1 : i32, feature_index = 1 : i64", "tensor<2x3xf32>",
         "tensor<3xf32>", "tensor<3xf32>"),
     IA, "<input>:2:10:",
     "stablehlo.batch_norm_training: missing float attribute 'epsilon'"},
    {BNT("epsilon = 0.0 : f32, feature_index = 1 : i64", "tensor<2x3xi32>",
         "tensor<3xi32>", "tensor<3xi32>"),
     IA, "<input>:2:10:",
     "stablehlo.batch_norm_training: element type i32 is not floating-point or "
     "per-tensor quantized"},
    {BNT("epsilon = 0.0 : f32, feature_index = 1 : i64", "tensor<2x3xf32>",
         "tensor<3xf16>", "tensor<3xf32>"),
     IA, "<input>:2:10:",
     "stablehlo.batch_norm_training: operand 1 has element type f16, expected "
     "f32"},
    {BNT("epsilon = 0.0 : f32, feature_index = -1 : i64", "tensor<2x3xf32>",
         "tensor<3xf32>", "tensor<3xf32>"),
     IA, "<input>:2:10:",
     "stablehlo.batch_norm_training: feature_index -1 is out of range for rank "
     "2"},
    {"func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %m: "
     "tensor<3xf32>, %v: tensor<3xf32>, %g: tensor<2x2xf32>) -> "
     "tensor<2x3xf32> {\n  %0:3 = \"stablehlo.batch_norm_grad\"(%x, %s, %m, "
     "%v, %g) {epsilon = 0.0 : f32, feature_index = 1 : i64} : "
     "(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
     "tensor<2x2xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)\n  "
     "func.return %0#0 : tensor<2x3xf32>\n}\n",
     IA, "<input>:2:10:",
     "stablehlo.batch_norm_grad: operand 4 must have the operand's shape"},
    {RNG("UNIFORM", "tensor<1xf32>", "tensor<f32>", "tensor<1xi64>",
         "tensor<3xf32>"),
     IA, "<input>:2:8:", "stablehlo.rng: a and b must be 0-dimensional"},
    {RNG("UNIFORM", "tensor<f32>", "tensor<f64>", "tensor<1xi64>",
         "tensor<3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.rng: a, b and result must have the same element type"},
    {RNG("UNIFORM", "tensor<complex<f32>>", "tensor<complex<f32>>",
         "tensor<1xi64>", "tensor<3xcomplex<f32>>"),
     IA,
     "<input>:2:8:", "stablehlo.rng: element type complex<f32> is not allowed"},
    {RNG("UNIFORM", "tensor<f32>", "tensor<f32>", "tensor<2xi64>",
         "tensor<3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.rng: shape must be a 1-D integer tensor of 1 entries"},
    {RNG("UNIFORM", "tensor<f32>", "tensor<f32>", "tensor<1xf32>",
         "tensor<3xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.rng: shape must be a 1-D integer tensor of 1 entries"},
    {RBG("THREE_FRY", "tensor<2xui32>", "tensor<4xui32>"), IA, "<input>:2:10:",
     "stablehlo.rng_bit_generator: initial_state must be a 1-D ui64 tensor"},
    {RBG("PHILOX", "tensor<4xui64>", "tensor<4xui32>"), IA, "<input>:2:10:",
     "stablehlo.rng_bit_generator: initial_state must have 2 or 3 entries for "
     "PHILOX, not 4"},
    {RBG("DEFAULT", "tensor<3xui64>", "tensor<4xcomplex<f32>>"), IA,
     "<input>:2:10:",
     "stablehlo.rng_bit_generator: output must have an integer or "
     "floating-point element type, not complex<f32>"},
    {"func.func @main(%s: tensor<2xui64>) -> tensor<4xui32> {\n  %0:2 = "
     "stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) "
     "-> (tensor<3xui64>, tensor<4xui32>)\n  func.return %0#1 : "
     "tensor<4xui32>\n}\n",
     IA, "<input>:2:10:",
     "stablehlo.rng_bit_generator: output_state type differs from "
     "initial_state: tensor<2xui64> vs tensor<3xui64>"},
    {RD(RDN("[]", "[]", "[1]", "[1]", "[0]", "[0]"), "tensor<5x2xf32>",
        "tensor<3x2x2xf32>", "tensor<3xi32>", "tensor<5x3xf32>"),
     IA, "<input>:2:8:",
     "chlo.ragged_dot: result shape does not follow from the operands and "
     "ragged_dot_dimension_numbers"},
    {RD(RDN("[]", "[]", "[1]", "[]", "[0]", "[0]"), "tensor<5x2xf32>",
        "tensor<3x2x2xf32>", "tensor<3xi32>", "tensor<5x2xf32>"),
     IA, "<input>:2:8:",
     "chlo.ragged_dot: lhs and rhs need as many batching and contracting "
     "dimensions"},
    {RD(RDN("[]", "[]", "[1]", "[2]", "[0]", "[0]"), "tensor<5x2xf32>",
        "tensor<3x2x3xf32>", "tensor<3xi32>", "tensor<5x2xf32>"),
     IA, "<input>:2:8:",
     "chlo.ragged_dot: contracting dimension sizes differ: lhs 2 vs rhs 3"},
    {RD(RDN("[]", "[]", "[1]", "[1]", "[5]", "[0]"), "tensor<5x2xf32>",
        "tensor<3x2x2xf32>", "tensor<3xi32>", "tensor<5x2xf32>"),
     IA,
     "<input>:2:8:", "chlo.ragged_dot: lhs ragged dimension 5 is out of range"},
    {RD(RDN("[]", "[]", "[1]", "[1]", "[0]", "[0]"), "tensor<5x2xf32>",
        "tensor<3x2x2xf32>", "tensor<3xf32>", "tensor<5x2xf32>"),
     IA, "<input>:2:8:",
     "chlo.ragged_dot: group_sizes must be a 1-D integer tensor"},
    {RD(RDN("[]", "[]", "[1]", "[1]", "[0]", "[0]"), "tensor<5x2xf32>",
        "tensor<3x2x2xf16>", "tensor<3xi32>", "tensor<5x2xf32>"),
     IA, "<input>:2:8:", "chlo.ragged_dot: lhs and rhs element types differ"},
    {RD(RDN("[]", "[]", "[1]", "[0]", "[1]", "[1]"), "tensor<5x2xf32>",
        "tensor<2x3xf32>", "tensor<3xi32>", "tensor<3x5x3xf32>"),
     IA, "<input>:2:8:",
     "chlo.ragged_dot: rhs_group_dimensions must be empty when the ragged "
     "dimension is a batching or contracting one"},
    {RD(RDN("[]", "[]", "[1]", "[1]", "[0]", "[]"), "tensor<5x2xf32>",
        "tensor<3x2x2xf32>", "tensor<3xi32>", "tensor<5x2xf32>"),
     IA, "<input>:2:8:",
     "chlo.ragged_dot: a ragged non-contracting dimension needs one "
     "rhs_group_dimensions"},
    {RD(RDN("[]", "[]", "[1]", "[1]", "[0]", "[0]"), "tensor<5x2xf32>",
        "tensor<3x2x2xf32>", "tensor<3xi32>", "tensor<5x7xf32>"),
     IA, "<input>:2:8:",
     "chlo.ragged_dot: result shape does not follow from the operands and "
     "ragged_dot_dimension_numbers"},
    {RD(RDN("[]", "[]", "[1]", "[1]", "[0, 1]", "[0]"), "tensor<5x2xf32>",
        "tensor<3x2x2xf32>", "tensor<3xi32>", "tensor<5x2xf32>"),
     IA, "<input>:2:8:", "chlo.ragged_dot: exactly one lhs_ragged_dimensions"},
    {RD(RDN("[]", "[]", "[1]", "[1]", "[0]", "[0, 0]"), "tensor<5x2xf32>",
        "tensor<3x2x2xf32>", "tensor<3xi32>", "tensor<5x2xf32>"),
     IA, "<input>:2:8:",
     "chlo.ragged_dot: rhs dimensions: dimension 0 appears twice"},
    {CONV(CONV_DN ", feature_group_count = 1.5 : f32", "tensor<2x4x3xf32>",
          "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: attribute 'feature_group_count' must be an "
     "integer"},
    {CONV("dimension_numbers = {input_feature_dimension = 1 : i64}",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: dimension_numbers needs the integer "
     "input_batch_dimension"},
    {CONV("dimension_numbers = {input_batch_dimension = 0 : i64, "
          "input_feature_dimension = 1 : i64, input_spatial_dimensions = 2 : "
          "i64}",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: dimension_numbers needs the list "
     "input_spatial_dimensions"},
    {CONV("dimension_numbers = {input_batch_dimension = 0 : i64, "
          "input_feature_dimension = 1 : i64, input_spatial_dimensions = [2, "
          "3]}",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: input_spatial_dimensions must have 1 entries, not "
     "2"},
    {CONV(
         "dimension_numbers = {input_batch_dimension = 0 : i64, "
         "input_feature_dimension = 0 : i64, input_spatial_dimensions = [2], "
         "kernel_input_feature_dimension = 1 : i64, "
         "kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions "
         "= [2], output_batch_dimension = 0 : i64, output_feature_dimension = "
         "1 : i64, output_spatial_dimensions = [2]}",
         "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: input dimensions: dimension 0 appears twice"},
    {CONV(
         "dimension_numbers = {input_batch_dimension = 0 : i64, "
         "input_feature_dimension = 1 : i64, input_spatial_dimensions = [2], "
         "kernel_input_feature_dimension = 1 : i64, "
         "kernel_output_feature_dimension = 1 : i64, kernel_spatial_dimensions "
         "= [2], output_batch_dimension = 0 : i64, output_feature_dimension = "
         "1 : i64, output_spatial_dimensions = [2]}",
         "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: kernel dimensions: dimension 1 appears twice"},
    {CONV(CONV_DN ", padding = dense<[[1, 1, 1]]> : tensor<1x3xi64>",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA,
     "<input>:2:8:", "stablehlo.convolution: padding must have 1x2 entries"},
    {CONV(CONV_DN
          ", padding = dense<[[-4611686018427387904, 0]]> : tensor<1x2xi64>",
          "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA,
     "<input>:2:8:", "stablehlo.convolution: padding entry 0 is out of range"},
    {RD("lhs_batching_dimensions = 1", "tensor<5x2xf32>", "tensor<3x2x2xf32>",
        "tensor<3xi32>", "tensor<5x2xf32>"),
     IA, "<input>:2:8:",
     "chlo.ragged_dot: lhs_batching_dimensions must be a list of integers"},
    {RD(RDN("[0, 0, 0, 0, 0, 0, 0, 0, 0]", "[0, 0, 0, 0, 0, 0, 0, 0, 0]",
            "[1, 1, 1, 1, 1, 1, 1, 1]", "[1, 1, 1, 1, 1, 1, 1, 1]", "[0]",
            "[0]"),
        "tensor<5x2xf32>", "tensor<3x2x2xf32>", "tensor<3xi32>",
        "tensor<5x2xf32>"),
     IA, "<input>:2:8:", "chlo.ragged_dot: too many dimensions"},
};

TU_BAD_PROGS_TEST(test_linalg, linalg_cases)

static const tu_bad_prog normalize_cases[] = {
    {CONVP("[b, f, 0]x[o, i, 0]->[b, f, 0]", "stride = [1], pad = [[0]]",
           "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: pad entries must be [low, high] pairs"},
    {CONVP("[b, f, 0]x[o, i, 0]->[b, f, 0]",
           "pad = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, "
           "0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, "
           "0], [0, 0]]",
           "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:", "stablehlo.convolution: too many pads"},
    {CONVP("[b, f, q]x[o, i, 0]->[b, f, 0]", "stride = [1]",
           "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:", "stablehlo.convolution: malformed dimension numbers"},
    {CONVP("[b, f, 99]x[o, i, 0]->[b, f, 0]", "stride = [1]",
           "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:", "stablehlo.convolution: spatial dimension too large"},
    {CONVP("[b, f, 0]x[o, i, 0]->[b, f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
           "0, 0]",
           "stride = [1]", "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:", "stablehlo.convolution: too many dimensions"},
    {CONVP("[b, f, 0]x[o, i, 0]->[b, 0, 0]", "stride = [1]",
           "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: dimension numbers lack a batch/feature letter"},
    {CONVP("[b, f, 0]x[o, i, 0]", "stride = [1]", "tensor<2x4x3xf32>",
           "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: expected '->' in dimension numbers"},
    {CONVP("[b, f, 0]", "stride = [1]", "tensor<2x4x3xf32>",
           "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:",
     "stablehlo.convolution: expected 'x' in dimension numbers"},
    {CONVP("b, f, 0]x[o, i, 0]->[b, f, 0]", "stride = [1]", "tensor<2x4x3xf32>",
           "tensor<1x2x4xf32>"),
     IA, "<input>:2:58:", "expected ':', found '0'"},
    {CONVP("[b, f, 0]x[o, i, 0]->[b, f, 0]", "stride = [1], frob = [2]",
           "tensor<2x4x3xf32>", "tensor<1x2x4xf32>"),
     IA, "<input>:2:8:", "stablehlo.convolution: unknown field in window"},
    {"func.func @main(%x: tensor<1x4x6xf32>, %w: tensor<2x4x3xf32>) -> "
     "tensor<1x2x4xf32> {\n  %0 = \"stablehlo.convolution\"(%x, %w) "
     "{dimension_numbers = \"[b, f, 0]y[o, i, 0]->[b, f, 0]\"} : "
     "(tensor<1x4x6xf32>, tensor<2x4x3xf32>) -> tensor<1x2x4xf32>\n  "
     "func.return %0 : tensor<1x2x4xf32>\n}\n",
     IA, "<input>:2:8:",
     "stablehlo.convolution: expected 'x' in dimension numbers"},
    {"func.func @main(%x: tensor<1x4x6xf32>, %w: tensor<2x4x3xf32>) -> "
     "tensor<1x2x4xf32> {\n  %0 = \"stablehlo.convolution\"(%x, %w) "
     "{dimension_numbers = \"[b, f, 0]x[o, i, 0]=>[b, f, 0]\"} : "
     "(tensor<1x4x6xf32>, tensor<2x4x3xf32>) -> tensor<1x2x4xf32>\n  "
     "func.return %0 : tensor<1x2x4xf32>\n}\n",
     IA, "<input>:2:8:",
     "stablehlo.convolution: expected '->' in dimension numbers"},
};

TU_BAD_PROGS_TEST(test_normalize, normalize_cases)

TU_MAIN(NULL, NULL, cmocka_unit_test(test_linalg),
        cmocka_unit_test(test_normalize))
