/*
 * test_refine_malformed.c - shape refinement of ops whose attributes do not
 * determine their result shape (src/core/refine_infer.c): out-of-range
 * dimensions, attribute lists of the wrong length, zero strides, two
 * unknown reshape dimensions, sizes too large to describe a tensor.
 * Inference must give up on each (never read out of bounds or overflow):
 * the program is refused, naming the op and the result dimension that
 * stays dynamic (the verifier would report the attribute itself once the
 * program were static).  Each case names the message fragment it must
 * produce.
 */
#include "test_util.h"

#define C(state) ((xrt_client *)*(state))

typedef struct mf_case {
  const char *text; /* @main(%x: tensor<?x?xf32>) given [2, 3] */
  const char *what; /* a fragment of the refusal */
} mf_case;

#define MF(body, result)                                                    \
  "func.func @main(%x: tensor<?x?xf32>) -> " result " {\n" body             \
  "  return %r : " result "\n}\n"

/* reduce_window (an add) and pad of %x with the attributes attrs. */
#define RWIN(attrs)                                                         \
  MF("  %i = stablehlo.constant dense<0.0> : tensor<f32>\n"                 \
     "  %r = \"stablehlo.reduce_window\"(%x, %i) ({\n"                      \
     "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"                           \
     "    %m = stablehlo.add %a, %b : tensor<f32>\n"                         \
     "    stablehlo.return %m : tensor<f32>\n"                               \
     "  }) {" attrs "} : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>\n", \
     "tensor<?x?xf32>"),                                                    \
      "stablehlo.reduce_window: result 0: dimension 0 stays dynamic"
#define PAD(attrs)                                                          \
  MF("  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"                 \
     "  %r = \"stablehlo.pad\"(%x, %z) {" attrs                              \
     "} : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>\n",              \
     "tensor<?x?xf32>"),                                                    \
      "stablehlo.pad: result 0: dimension 0 stays dynamic"

static const mf_case k_cases[] = {
    /* transpose: a permutation of the wrong length */
    {MF("  %r = \"stablehlo.transpose\"(%x) {permutation = array<i64: 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "stablehlo.transpose: result 0: dimension 0 stays dynamic"},
    /* reshape: two unknown dimensions */
    {MF("  %r = stablehlo.reshape %x : (tensor<?x?xf32>) -> tensor<?x?x1xf32>\n",
        "tensor<?x?x1xf32>"), "stablehlo.reshape: result 0: dimension 0 stays dynamic"},
    /* reshape: a declared size past any tensor's */
    {MF("  %r = stablehlo.reshape %x : (tensor<?x?xf32>) -> tensor<?x2199023255553xf32>\n",
        "tensor<?x2199023255553xf32>"), "stablehlo.reshape: result 0: dimension 0 stays dynamic"},
    /* reshape: the element count does not divide */
    {MF("  %r = stablehlo.reshape %x : (tensor<?x?xf32>) -> tensor<?x4xf32>\n",
        "tensor<?x4xf32>"), "stablehlo.reshape: result 0: dimension 0 stays dynamic"},
    /* slice: a limit below the start, strides of the wrong length */
    {MF("  %r = \"stablehlo.slice\"(%x) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 0, 3>, strides = array<i64: 1, 1>} : (tensor<?x?xf32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "stablehlo.slice: result 0: dimension 0 stays dynamic"},
    {MF("  %r = \"stablehlo.slice\"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 3>, strides = array<i64: 1>} : (tensor<?x?xf32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "stablehlo.slice: result 0: dimension 0 stays dynamic"},
    {MF("  %r = \"stablehlo.slice\"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 3>, strides = array<i64: 0, 1>} : (tensor<?x?xf32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "stablehlo.slice: result 0: dimension 0 stays dynamic"},
    {MF("  %r = \"stablehlo.slice\"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4398046511104, 3>} : (tensor<?x?xf32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "stablehlo.slice: result 0: dimension 0 stays dynamic"},
    /* pad: lists of the wrong length, a huge padding */
    {PAD("edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: 0, 0>, interior_padding = array<i64: 0, 0>")},
    {PAD("edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 0, 4398046511104>, interior_padding = array<i64: 0, 0>")},
    /* concatenate: a dimension out of range */
    {MF("  %r = \"stablehlo.concatenate\"(%x, %x) {dimension = 2 : i64} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "stablehlo.concatenate: result 0: dimension 0 stays dynamic"},
    /* broadcast_in_dim: a dimension out of range; a size-1 input that
     * does not tell */
    {MF("  %r = stablehlo.broadcast_in_dim %x, dims = [0, 5] : (tensor<?x?xf32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "stablehlo.broadcast_in_dim: result 0: dimension 1 stays dynamic"},
    /* broadcast: sizes that do not add up to the rank */
    {MF("  %r = \"stablehlo.broadcast\"(%x) {broadcast_sizes = array<i64: 2, 2>} : (tensor<?x?xf32>) -> tensor<?x?x?xf32>\n",
        "tensor<?x?x?xf32>"), "stablehlo.broadcast: result 0: dimension 0 stays dynamic"},
    /* reduce_window: a window of the wrong length, a zero stride */
    {RWIN("window_dimensions = array<i64: 1>")},
    {RWIN("window_dimensions = array<i64: 1, 1>, window_strides = array<i64: 0, 1>")},
    /* dot of a matrix with a rank-3 operand */
    {MF("  %r = \"stablehlo.dot\"(%x, %x) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>\n",
        "tensor<?x?x?xf32>"), "stablehlo.dot: result 0: dimension 0 stays dynamic"},
    /* dot_general whose dimensions leave another rank than the result's */
    {MF("  %r = stablehlo.dot_general %x, %x, contracting_dims = [1] x [1] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?xf32>\n",
        "tensor<?xf32>"), "stablehlo.dot_general: result 0: dimension 0 stays dynamic"},
    /* gather: slice sizes of the wrong length */
    {MF("  %i = stablehlo.constant dense<[[0]]> : tensor<1x1xi32>\n"
        "  %r = \"stablehlo.gather\"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1x1xi32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "stablehlo.gather: result 0: dimension 0 stays dynamic"},
    /* chlo broadcasting with broadcast_dimensions out of range */
    {MF("  %v = stablehlo.slice %x [0:1, 0:3] : (tensor<?x?xf32>) -> tensor<?x?xf32>\n"
        "  %w = stablehlo.reshape %v : (tensor<?x?xf32>) -> tensor<?xf32>\n"
        "  %r = chlo.broadcast_add %x, %w {broadcast_dimensions = array<i64: 7>} : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "chlo.broadcast_add: result 0: dimension 0 stays dynamic"},
    /* convolution: strides of the wrong length, a zero stride */
    {MF("  %x3 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<?x?xf32>) -> tensor<1x?x?xf32>\n"
        "  %k = stablehlo.constant dense<1.0> : tensor<1x3x1xf32>\n"
        "  %r = \"stablehlo.convolution\"(%x3, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, window_strides = array<i64: 1, 1>} : (tensor<1x?x?xf32>, tensor<1x3x1xf32>) -> tensor<1x?x1xf32>\n",
        "tensor<1x?x1xf32>"), "stablehlo.convolution: result 0: dimension 1 stays dynamic"},
    {MF("  %x3 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<?x?xf32>) -> tensor<1x?x?xf32>\n"
        "  %k = stablehlo.constant dense<1.0> : tensor<1x3x1xf32>\n"
        "  %r = \"stablehlo.convolution\"(%x3, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, padding = dense<0> : tensor<2x2xi64>} : (tensor<1x?x?xf32>, tensor<1x3x1xf32>) -> tensor<1x?x1xf32>\n",
        "tensor<1x?x1xf32>"), "stablehlo.convolution: result 0: dimension 1 stays dynamic"},
    /* reshape to a zero-sized dimension: the unknown one cannot follow */
    {MF("  %r = stablehlo.reshape %x : (tensor<?x?xf32>) -> tensor<?x0xf32>\n",
        "tensor<?x0xf32>"), "stablehlo.reshape: result 0: dimension 0 stays dynamic"},
    /* concatenate of operands of two ranks */
    {MF("  %v = stablehlo.reshape %x : (tensor<?x?xf32>) -> tensor<6xf32>\n"
        "  %r = \"stablehlo.concatenate\"(%x, %v) {dimension = 0 : i64} : (tensor<?x?xf32>, tensor<6xf32>) -> tensor<?x?xf32>\n",
        "tensor<?x?xf32>"), "stablehlo.concatenate: result 0: dimension 0 stays dynamic"},
    /* transpose to another rank */
    {MF("  %r = \"stablehlo.transpose\"(%x) {permutation = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?xf32>\n",
        "tensor<?xf32>"), "stablehlo.transpose: result 0: dimension 0 stays dynamic"},
    /* pad with interior padding of the wrong length */
    {PAD("edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 0, 0>, interior_padding = array<i64: 0>")},
    /* reduce_window with a zero base dilation */
    {RWIN("window_dimensions = array<i64: 1, 1>, base_dilations = array<i64: 0, 1>")},
    /* convolution with a zero lhs dilation */
    {MF("  %x3 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<?x?xf32>) -> tensor<1x?x?xf32>\n"
        "  %k = stablehlo.constant dense<1.0> : tensor<1x3x1xf32>\n"
        "  %r = \"stablehlo.convolution\"(%x3, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 0>} : (tensor<1x?x?xf32>, tensor<1x3x1xf32>) -> tensor<1x?x1xf32>\n",
        "tensor<1x?x1xf32>"), "stablehlo.convolution: result 0: dimension 1 stays dynamic"},
    /* window attributes of the wrong length, zero or huge */
    {RWIN("window_dimensions = array<i64: 1, 1>, window_strides = array<i64: 1>")},
    {RWIN("window_dimensions = array<i64: 1, 1>, base_dilations = array<i64: 1>")},
    {RWIN("window_dimensions = array<i64: 1, 1>, window_dilations = array<i64: 1>")},
    {RWIN("window_dimensions = array<i64: 1, 1>, padding = dense<0> : tensor<1x2xi64>")},
    {RWIN("window_dimensions = array<i64: 1, 1>, window_dilations = array<i64: 0, 1>")},
    {RWIN("window_dimensions = array<i64: 1, 1>, window_strides = array<i64: 4398046511104, 1>")},
    {MF("  %x3 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<?x?xf32>) -> tensor<1x?x?xf32>\n"
        "  %k = stablehlo.constant dense<1.0> : tensor<1x3x1xf32>\n"
        "  %r = \"stablehlo.convolution\"(%x3, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>} : (tensor<1x?x?xf32>, tensor<1x3x1xf32>) -> tensor<1x?x1xf32>\n",
        "tensor<1x?x1xf32>"), "stablehlo.convolution: result 0: dimension 1 stays dynamic"},
    {MF("  %x3 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<?x?xf32>) -> tensor<1x?x?xf32>\n"
        "  %k = stablehlo.constant dense<1.0> : tensor<1x3x1xf32>\n"
        "  %r = \"stablehlo.convolution\"(%x3, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, rhs_dilation = array<i64: 1, 1>} : (tensor<1x?x?xf32>, tensor<1x3x1xf32>) -> tensor<1x?x1xf32>\n",
        "tensor<1x?x1xf32>"), "stablehlo.convolution: result 0: dimension 1 stays dynamic"},
    {MF("  %x3 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<?x?xf32>) -> tensor<1x?x?xf32>\n"
        "  %k = stablehlo.constant dense<1.0> : tensor<1x3x1xf32>\n"
        "  %r = \"stablehlo.convolution\"(%x3, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, rhs_dilation = array<i64: 0>} : (tensor<1x?x?xf32>, tensor<1x3x1xf32>) -> tensor<1x?x1xf32>\n",
        "tensor<1x?x1xf32>"), "stablehlo.convolution: result 0: dimension 1 stays dynamic"},
    {MF("  %x3 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<?x?xf32>) -> tensor<1x?x?xf32>\n"
        "  %k = stablehlo.constant dense<1.0> : tensor<1x3x1xf32>\n"
        "  %r = \"stablehlo.convolution\"(%x3, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, padding = dense<4398046511104> : tensor<1x2xi64>} : (tensor<1x?x?xf32>, tensor<1x3x1xf32>) -> tensor<1x?x1xf32>\n",
        "tensor<1x?x1xf32>"), "stablehlo.convolution: result 0: dimension 1 stays dynamic"},
    /* pad with a huge interior padding */
    {PAD("edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 0, 0>, interior_padding = array<i64: 4398046511104, 0>")},
};

static void test_malformed_ops_refused(void **state) {
  xrt_shape in[1] = {TU_SHAPE(XRT_F32, 2, 3)};
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
    tu_compile_fails(C(state), k_cases[i].text, "mf.mlir", 1, in,
                     XRT_INVALID_ARGUMENT, "mf.mlir:", k_cases[i].what);
    if (getenv("XRT_TEST_VERBOSE")) printf("  case %zu: %s\n", i, tu_msg);
  }
}

TU_MAIN(tu_setup_client, tu_teardown_client,
        cmocka_unit_test(test_malformed_ops_refused))
