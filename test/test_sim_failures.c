/*
 * test_sim_failures.c - failures inside the simulator's planner and
 * runtime: host allocation failures, and kernel faults injected at every
 * step of a run.
 *
 * Allocation failures: host allocation failures inside the simulator's
 * planner and runtime (src/sim/lower.c, move.c, index.c, control.c,
 * fusion.c, plan.c, exec.c, serialize.c): the simulator's plugin table is
 * driven directly with a client whose allocator (test_util.h's counting
 * allocator) fails its Nth allocation, for N = 1, 2, ... until a whole
 * walk_round passes without reaching N: create the client, compile a program,
 * upload its inputs, execute it, read its results, serialize the
 * executable and load the bytes back, and execute what was loaded.
 *
 * At every N each call must succeed or fail with XRT_RESOURCE_EXHAUSTED
 * and a message naming the memory; results that come back must be the
 * expected ones (worked out by hand below, or by a reference loop in the
 * test); and after the cleanup the allocator must hold no block (no
 * leak).  The walk runs twice: the Nth allocation failing alone, and the
 * Nth and every later one (SQLite's persistent mode).  The programs cover
 * most lowerers: data movement, indexing, control flow, reductions,
 * dot_general and convolution, and fusable elementwise chains.
 * test_alloc_fail.c does the same through the public API with the core;
 * this one reaches the simulator's own allocation checks.
 *
 * Injected faults: for K = 0, 1, ... the simulator is told to fail the
 * next execution after K kernels (inject_fault); the run must fail with
 * XRT_INTERNAL naming "injected fault after K steps of @main" and the
 * kernel, wherever that kernel is (inside a loop body, a branch, a
 * scatter or sort or window region, a called function), until K passes
 * the number of kernels and the run succeeds with the expected results.
 * Issue #25.
 */
#include "test_plugin_abi.h"

#define MAX_IO 8

typedef struct io {
  xrt_shape shape;
  const void *data;
} io;

typedef struct program_case {
  const char *name, *text;
  int loadable; /* every op loads from serialized bytes */
  int nin, nout;
  io in[MAX_IO];
  io out[MAX_IO]; /* expected */
} program_case;

#define S32(...) TU_SHAPE(XRT_S32, __VA_ARGS__)
#define F32(...) TU_SHAPE(XRT_F32, __VA_ARGS__)

/* ---- the programs and their results, by hand ---- */

/* x = [[1, 2, 3], [4, 5, 6]]
 * t = x^T = [[1, 4], [2, 5], [3, 6]]; r = [1, 4, 2, 5, 3, 6]
 * s = r[1:5:2] = [4, 5]; p = pad(s, low 1, high 1, interior 1) =
 * [0, 4, 0, 5, 0]; v = reverse(p) = [0, 5, 0, 4, 0]; c = v ++ s
 * b = broadcast s along dim 1 = [[4, 5], [4, 5]]; i = iota = [0..3]
 * ds = r[3:5] = [5, 3]; du = r with s at 1 = [1, 4, 5, 5, 3, 6] */
static const char *kMove =
    "func.func @main(%x: tensor<2x3xi32>) -> (tensor<7xi32>, tensor<2x2xi32>, tensor<4xi32>, tensor<2xi32>, tensor<6xi32>) {\n"
    "  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>\n"
    "  %r = stablehlo.reshape %t : (tensor<3x2xi32>) -> tensor<6xi32>\n"
    "  %s = \"stablehlo.slice\"(%r) {start_indices = array<i64: 1>, limit_indices = array<i64: 5>, strides = array<i64: 2>} : (tensor<6xi32>) -> tensor<2xi32>\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %p = stablehlo.pad %s, %z, low = [1], high = [1], interior = [1] : (tensor<2xi32>, tensor<i32>) -> tensor<5xi32>\n"
    "  %v = stablehlo.reverse %p, dims = [0] : tensor<5xi32>\n"
    "  %c = stablehlo.concatenate %v, %s, dim = 0 : (tensor<5xi32>, tensor<2xi32>) -> tensor<7xi32>\n"
    "  %b = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<2xi32>) -> tensor<2x2xi32>\n"
    "  %i = stablehlo.iota dim = 0 : tensor<4xi32>\n"
    "  %k = stablehlo.constant dense<3> : tensor<i32>\n"
    "  %ds = \"stablehlo.dynamic_slice\"(%r, %k) {slice_sizes = array<i64: 2>} : (tensor<6xi32>, tensor<i32>) -> tensor<2xi32>\n"
    "  %k1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %du = stablehlo.dynamic_update_slice %r, %s, %k1 : (tensor<6xi32>, tensor<2xi32>, tensor<i32>) -> tensor<6xi32>\n"
    "  return %c, %b, %i, %ds, %du : tensor<7xi32>, tensor<2x2xi32>, tensor<4xi32>, tensor<2xi32>, tensor<6xi32>\n"
    "}\n";
static const int32_t kMoveX[] = {1, 2, 3, 4, 5, 6};
static const int32_t kMoveC[] = {0, 5, 0, 4, 0, 4, 5};
static const int32_t kMoveB[] = {4, 5, 4, 5};
static const int32_t kMoveI[] = {0, 1, 2, 3};
static const int32_t kMoveDs[] = {5, 3};
static const int32_t kMoveDu[] = {1, 4, 5, 5, 3, 6};

/* a = [[0, 1], [2, 3], [4, 5]]; gather rows [2, 0] = [[4, 5], [0, 1]]
 * scatter-add windows of 2 at 1 and 3 of [[1, 2], [10, 20]] into 5 zeros
 * = [0, 1, 2, 10, 20]; sort [3, 1, 2] = [1, 2, 3]; reduce_window sum
 * of 2 over [1, 2, 3, 4] = [3, 5, 7] */
static const char *kIndex =
    "func.func @main(%a: tensor<3x2xi32>, %i: tensor<2xi32>, %si: tensor<2x1xi32>, %u: tensor<2x2xi32>, %k: tensor<3xi32>, %w: tensor<4xi32>) -> (tensor<2x2xi32>, tensor<5xi32>, tensor<3xi32>, tensor<3xi32>) {\n"
    "  %g = \"stablehlo.gather\"(%a, %i) {dimension_numbers = #stablehlo.gather<\n"
    "    offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0],\n"
    "    index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>,\n"
    "    indices_are_sorted = false} : (tensor<3x2xi32>, tensor<2xi32>) -> tensor<2x2xi32>\n"
    "  %z = stablehlo.constant dense<0> : tensor<5xi32>\n"
    "  %s = \"stablehlo.scatter\"(%z, %si, %u) ({\n"
    "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
    "    %t = stablehlo.add %x, %y : tensor<i32>\n"
    "    stablehlo.return %t : tensor<i32>\n"
    "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],\n"
    "      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,\n"
    "      indices_are_sorted = false, unique_indices = false}\n"
    "    : (tensor<5xi32>, tensor<2x1xi32>, tensor<2x2xi32>) -> tensor<5xi32>\n"
    "  %o = \"stablehlo.sort\"(%k) ({\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %c = stablehlo.compare LT, %p, %q, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  }) {dimension = 0 : i64, is_stable = true} : (tensor<3xi32>) -> tensor<3xi32>\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %rw = \"stablehlo.reduce_window\"(%w, %zero) ({\n"
    "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
    "    %m = stablehlo.add %x, %y : tensor<i32>\n"
    "    stablehlo.return %m : tensor<i32>\n"
    "  }) {window_dimensions = array<i64: 2>} : (tensor<4xi32>, tensor<i32>) -> tensor<3xi32>\n"
    "  return %g, %s, %o, %rw : tensor<2x2xi32>, tensor<5xi32>, tensor<3xi32>, tensor<3xi32>\n"
    "}\n";
static const int32_t kIndexA[] = {0, 1, 2, 3, 4, 5}, kIndexI[] = {2, 0};
static const int32_t kIndexSi[] = {1, 3}, kIndexU[] = {1, 2, 10, 20};
static const int32_t kIndexK[] = {3, 1, 2}, kIndexW[] = {1, 2, 3, 4};
static const int32_t kIndexG[] = {4, 5, 0, 1}, kIndexS[] = {0, 1, 2, 10, 20};
static const int32_t kIndexO[] = {1, 2, 3}, kIndexRw[] = {3, 5, 7};

/* x = [1, 2]; the loop doubles it 3 times: [8, 16]; n = 3, so the if
 * takes its first branch: [8, 16] + x = [9, 18]; case 1 squares through
 * @sq: [81, 324]; and @sq(x) = [1, 4]. */
static const char *kControl =
    "func.func private @sq(%a: tensor<2xi32>) -> tensor<2xi32> {\n"
    "  %m = stablehlo.multiply %a, %a : tensor<2xi32>\n"
    "  return %m : tensor<2xi32>\n"
    "}\n"
    "func.func @main(%x: tensor<2xi32>, %sel: tensor<i32>) -> (tensor<2xi32>, tensor<2xi32>) {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %three = stablehlo.constant dense<3> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<2xi32>\n"
    "  cond {\n"
    "    %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  } do {\n"
    "    %n = stablehlo.add %i, %one : tensor<i32>\n"
    "    %d = stablehlo.add %acc, %acc : tensor<2xi32>\n"
    "    stablehlo.return %n, %d : tensor<i32>, tensor<2xi32>\n"
    "  }\n"
    "  %p = stablehlo.compare EQ, %r#0, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "  %f = \"stablehlo.if\"(%p) ({\n"
    "    %a = stablehlo.add %r#1, %x : tensor<2xi32>\n"
    "    stablehlo.return %a : tensor<2xi32>\n"
    "  }, {\n"
    "    %n = stablehlo.negate %r#1 : tensor<2xi32>\n"
    "    stablehlo.return %n : tensor<2xi32>\n"
    "  }) : (tensor<i1>) -> tensor<2xi32>\n"
    "  %g = \"stablehlo.case\"(%sel) ({\n"
    "    stablehlo.return %f : tensor<2xi32>\n"
    "  }, {\n"
    "    %q = func.call @sq(%f) : (tensor<2xi32>) -> tensor<2xi32>\n"
    "    stablehlo.return %q : tensor<2xi32>\n"
    "  }) : (tensor<i32>) -> tensor<2xi32>\n"
    "  %h = func.call @sq(%x) : (tensor<2xi32>) -> tensor<2xi32>\n"
    "  return %g, %h : tensor<2xi32>, tensor<2xi32>\n"
    "}\n";
static const int32_t kControlX[] = {1, 2}, kControlSel = 1;
static const int32_t kControlG[] = {81, 324}, kControlH[] = {1, 4};

/* x = [[1, 2, 3], [4, 5, 6]]: row sums [6, 15]; x x^T = [[14, 32],
 * [32, 77]]; a 1-D convolution of [1, 2, 3, 4] with [1, 1]: [3, 5, 7] */
static const char *kCompute =
    "func.func @main(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>, %a: tensor<1x4x1xf32>, %w: tensor<2x1x1xf32>) -> (tensor<2xf32>, tensor<2x2xf32>, tensor<1x3x1xf32>) {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
    "  %d = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
    "  %c = stablehlo.convolution(%a, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<2x1x1xf32>) -> tensor<1x3x1xf32>\n"
    "  return %s, %d, %c : tensor<2xf32>, tensor<2x2xf32>, tensor<1x3x1xf32>\n"
    "}\n";
static const float kComputeX[] = {1, 2, 3, 4, 5, 6};
static const float kComputeY[] = {1, 4, 2, 5, 3, 6};
static const float kComputeA[] = {1, 2, 3, 4}, kComputeW[] = {1, 1};
static const float kComputeS[] = {6, 15}, kComputeD[] = {14, 32, 32, 77};
static const float kComputeC[] = {3, 5, 7};

/* A fusable chain over a 16x16 array and a broadcast row, reduced:
 * e = (x + x) * r - x, then the column sums of e and max(e, 0). */
static const char *kFuse =
    "func.func @main(%x: tensor<16x16xi32>, %r: tensor<16xi32>) -> (tensor<16xi32>, tensor<16x16xi32>) {\n"
    "  %b = stablehlo.broadcast_in_dim %r, dims = [1] : (tensor<16xi32>) -> tensor<16x16xi32>\n"
    "  %a = stablehlo.add %x, %x : tensor<16x16xi32>\n"
    "  %m = stablehlo.multiply %a, %b : tensor<16x16xi32>\n"
    "  %e = stablehlo.subtract %m, %x : tensor<16x16xi32>\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [0] : (tensor<16x16xi32>, tensor<i32>) -> tensor<16xi32>\n"
    "  %zb = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<i32>) -> tensor<16x16xi32>\n"
    "  %p = stablehlo.maximum %e, %zb : tensor<16x16xi32>\n"
    "  return %s, %p : tensor<16xi32>, tensor<16x16xi32>\n"
    "}\n";
static int32_t kFuseX[256], kFuseR[16], kFuseS[16], kFuseP[256];

static void fuse_reference(void) {
  for (int i = 0; i < 256; i++) kFuseX[i] = (i * 37) % 23 - 11;
  for (int j = 0; j < 16; j++) kFuseR[j] = j - 7;
  memset(kFuseS, 0, sizeof kFuseS);
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      int32_t x = kFuseX[i * 16 + j];
      int32_t e = (x + x) * kFuseR[j] - x;
      kFuseS[j] += e;
      kFuseP[i * 16 + j] = e > 0 ? e : 0;
    }
}

/* Ops that load from serialized bytes (serialize.c's validator):
 * t = x^T; d = x t = [[14, 32], [32, 77]]; i = iota dim 1 = [[0, 1],
 * [0, 1]]; clamp(20, d, 40) = [[20, 32], [32, 40]]; where convert(i) >
 * 0.5 take the clamped value, else d: [[14, 32], [32, 40]]; reshaped to
 * [14, 32, 32, 40] and doubled twice in a loop: [56, 128, 128, 160]. */
static const char *kLoadable =
    "func.func @main(%x: tensor<2x3xf32>) -> tensor<4xf32> {\n"
    "  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
    "  %d = stablehlo.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
    "  %i = stablehlo.iota dim = 1 : tensor<2x2xi32>\n"
    "  %f = stablehlo.convert %i : (tensor<2x2xi32>) -> tensor<2x2xf32>\n"
    "  %lo = stablehlo.constant dense<20.0> : tensor<f32>\n"
    "  %hi = stablehlo.constant dense<40.0> : tensor<f32>\n"
    "  %cl = stablehlo.clamp %lo, %d, %hi : (tensor<f32>, tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>\n"
    "  %half = stablehlo.constant dense<0.5> : tensor<2x2xf32>\n"
    "  %c = stablehlo.compare GT, %f, %half : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>\n"
    "  %s = stablehlo.select %c, %cl, %d : tensor<2x2xi1>, tensor<2x2xf32>\n"
    "  %r = stablehlo.reshape %s : (tensor<2x2xf32>) -> tensor<4xf32>\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %two = stablehlo.constant dense<2> : tensor<i32>\n"
    "  %w:2 = stablehlo.while(%k = %zero, %acc = %r) : tensor<i32>, tensor<4xf32>\n"
    "  cond {\n"
    "    %lt = stablehlo.compare LT, %k, %two : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %lt : tensor<i1>\n"
    "  } do {\n"
    "    %n = stablehlo.add %k, %one : tensor<i32>\n"
    "    %a = stablehlo.add %acc, %acc : tensor<4xf32>\n"
    "    stablehlo.return %n, %a : tensor<i32>, tensor<4xf32>\n"
    "  }\n"
    "  return %w#1 : tensor<4xf32>\n"
    "}\n";
static const float kLoadableW[] = {56, 128, 128, 160};

/* Regions run as plans (not the fast paths): x = [3, 1, 2, 0]
 * map (p + q) * p over (x, x) = 2x^2 = [18, 2, 8, 0]
 * sort by LT(b, a) (a fast comparator with its operands swapped) and by
 * LT(-a, -b) (a plan): both descending, [3, 2, 1, 0]
 * scatter p + 2q of [[1, 2], [10, 20]] at 1 and 3 into 5 zeros:
 * [0, 2, 4, 20, 40]; and q + p (a fast body, operands swapped):
 * [0, 1, 2, 10, 20]
 * reduce_window min(max(p, q), max(p, q)) of 2 from -100: [3, 2, 2]
 * chlo.scan of a = [[1, 2, 3], [4, 5, 6]] along dim 1 from [100, 0]:
 * running sums [[101, 103, 106], [4, 9, 15]], carry [106, 15] */
static const char *kBodies =
    "func.func @main(%x: tensor<4xi32>, %si: tensor<2x1xi32>, %u: tensor<2x2xi32>, %a: tensor<2x3xi32>, %z: tensor<2xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<5xi32>, tensor<5xi32>, tensor<3xi32>, tensor<2x3xi32>, tensor<2xi32>) {\n"
    "  %m = \"stablehlo.map\"(%x, %x) ({\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %s = stablehlo.add %p, %q : tensor<i32>\n"
    "    %t = stablehlo.multiply %s, %p : tensor<i32>\n"
    "    stablehlo.return %t : tensor<i32>\n"
    "  }) {dimensions = array<i64: 0>} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>\n"
    "  %s1 = \"stablehlo.sort\"(%x) ({\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %c = stablehlo.compare LT, %q, %p, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  }) {dimension = 0 : i64, is_stable = true} : (tensor<4xi32>) -> tensor<4xi32>\n"
    "  %s2 = \"stablehlo.sort\"(%x) ({\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %n = stablehlo.negate %p : tensor<i32>\n"
    "    %o = stablehlo.negate %q : tensor<i32>\n"
    "    %c = stablehlo.compare LT, %n, %o, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  }) {dimension = 0 : i64, is_stable = true} : (tensor<4xi32>) -> tensor<4xi32>\n"
    "  %z5 = stablehlo.constant dense<0> : tensor<5xi32>\n"
    "  %sc = \"stablehlo.scatter\"(%z5, %si, %u) ({\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %s = stablehlo.add %p, %q : tensor<i32>\n"
    "    %t = stablehlo.add %s, %q : tensor<i32>\n"
    "    stablehlo.return %t : tensor<i32>\n"
    "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],\n"
    "      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,\n"
    "      indices_are_sorted = false, unique_indices = false}\n"
    "    : (tensor<5xi32>, tensor<2x1xi32>, tensor<2x2xi32>) -> tensor<5xi32>\n"
    "  %sc2 = \"stablehlo.scatter\"(%z5, %si, %u) ({\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %s = stablehlo.add %q, %p : tensor<i32>\n"
    "    stablehlo.return %s : tensor<i32>\n"
    "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],\n"
    "      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,\n"
    "      indices_are_sorted = false, unique_indices = false}\n"
    "    : (tensor<5xi32>, tensor<2x1xi32>, tensor<2x2xi32>) -> tensor<5xi32>\n"
    "  %init = stablehlo.constant dense<-100> : tensor<i32>\n"
    "  %rw = \"stablehlo.reduce_window\"(%x, %init) ({\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %mx = stablehlo.maximum %p, %q : tensor<i32>\n"
    "    %mn = stablehlo.minimum %mx, %mx : tensor<i32>\n"
    "    stablehlo.return %mn : tensor<i32>\n"
    "  }) {window_dimensions = array<i64: 2>} : (tensor<4xi32>, tensor<i32>) -> tensor<3xi32>\n"
    "  %r:2 = \"chlo.scan\"(%a, %z) ({\n"
    "  ^bb0(%p: tensor<2xi32>, %c: tensor<2xi32>):\n"
    "    %s = stablehlo.add %p, %c : tensor<2xi32>\n"
    "    stablehlo.return %s, %s : tensor<2xi32>, tensor<2xi32>\n"
    "  }) {dimension = 1 : i64, operandSegmentSizes = array<i32: 1, 1>} : (tensor<2x3xi32>, tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>)\n"
    "  return %m, %s1, %s2, %sc, %sc2, %rw, %r#0, %r#1 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<5xi32>, tensor<5xi32>, tensor<3xi32>, tensor<2x3xi32>, tensor<2xi32>\n"
    "}\n";
static const int32_t kBodiesX[] = {3, 1, 2, 0}, kBodiesZ[] = {100, 0};
static const int32_t kBodiesM[] = {18, 2, 8, 0}, kBodiesDesc[] = {3, 2, 1, 0};
static const int32_t kBodiesSc[] = {0, 2, 4, 20, 40};
static const int32_t kBodiesRw[] = {3, 2, 2};
static const int32_t kBodiesScan[] = {101, 103, 106, 4, 9, 15};
static const int32_t kBodiesCarry[] = {106, 15};

/* Values of no elements through loops, branches, sort and map: x = [1, 2]
 * doubled twice is [4, 8]. */
static const char *kZeros =
    "func.func @main(%e: tensor<0xf32>, %x: tensor<2xi32>) -> (tensor<0xf32>, tensor<0xf32>, tensor<2xi32>, tensor<0xf32>) {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %two = stablehlo.constant dense<2> : tensor<i32>\n"
    "  %w:3 = stablehlo.while(%i = %zero, %v = %e, %acc = %x) : tensor<i32>, tensor<0xf32>, tensor<2xi32>\n"
    "  cond {\n"
    "    %c = stablehlo.compare LT, %i, %two : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  } do {\n"
    "    %n = stablehlo.add %i, %one : tensor<i32>\n"
    "    %d = stablehlo.add %acc, %acc : tensor<2xi32>\n"
    "    stablehlo.return %n, %v, %d : tensor<i32>, tensor<0xf32>, tensor<2xi32>\n"
    "  }\n"
    "  %p = stablehlo.compare EQ, %w#0, %two : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "  %f = \"stablehlo.if\"(%p) ({\n"
    "    stablehlo.return %w#1 : tensor<0xf32>\n"
    "  }, {\n"
    "    stablehlo.return %e : tensor<0xf32>\n"
    "  }) : (tensor<i1>) -> tensor<0xf32>\n"
    "  %s = \"stablehlo.sort\"(%e) ({\n"
    "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  }) {dimension = 0 : i64} : (tensor<0xf32>) -> tensor<0xf32>\n"
    "  %m = \"stablehlo.map\"(%e) ({\n"
    "  ^bb0(%a: tensor<f32>):\n"
    "    %n = stablehlo.negate %a : tensor<f32>\n"
    "    stablehlo.return %n : tensor<f32>\n"
    "  }) {dimensions = array<i64: 0>} : (tensor<0xf32>) -> tensor<0xf32>\n"
    "  return %f, %s, %w#2, %m : tensor<0xf32>, tensor<0xf32>, tensor<2xi32>, tensor<0xf32>\n"
    "}\n";
static const float kNothing[1] = {0};
static const int32_t kZerosX[] = {1, 2}, kZerosW[] = {4, 8};

/* select_and_scatter with plans for both regions: windows of 2, stride
 * 2, over [3, 1, 2, 0] pick 3 (at 0) and 2 (at 2); the source [5, 7]
 * lands there on zeros: [5, 0, 7, 0]. */
static const char *kSas =
    "func.func @main(%x: tensor<4xi32>, %src: tensor<2xi32>) -> tensor<4xi32> {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r = \"stablehlo.select_and_scatter\"(%x, %src, %zero) ({\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %np = stablehlo.negate %p : tensor<i32>\n"
    "    %nq = stablehlo.negate %q : tensor<i32>\n"
    "    %c = stablehlo.compare LE, %np, %nq, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  }, {\n"
    "  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n"
    "    %s = stablehlo.add %p, %q : tensor<i32>\n"
    "    %t = stablehlo.maximum %s, %s : tensor<i32>\n"
    "    stablehlo.return %t : tensor<i32>\n"
    "  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>} : (tensor<4xi32>, tensor<2xi32>, tensor<i32>) -> tensor<4xi32>\n"
    "  return %r : tensor<4xi32>\n"
    "}\n";
static const int32_t kSasSrc[] = {5, 7}, kSasR[] = {5, 0, 7, 0};

static program_case g_cases[9];

static void cases_init(void) {
  fuse_reference();
  program_case c[9] = {
      {"move", kMove, 0, 1, 5, {{S32(2, 3), kMoveX}},
       {{S32(7), kMoveC}, {S32(2, 2), kMoveB}, {S32(4), kMoveI},
        {S32(2), kMoveDs}, {S32(6), kMoveDu}}},
      {"index", kIndex, 0, 6, 4,
       {{S32(3, 2), kIndexA}, {S32(2), kIndexI}, {S32(2, 1), kIndexSi},
        {S32(2, 2), kIndexU}, {S32(3), kIndexK}, {S32(4), kIndexW}},
       {{S32(2, 2), kIndexG}, {S32(5), kIndexS}, {S32(3), kIndexO},
        {S32(3), kIndexRw}}},
      {"control", kControl, 0, 2, 2,
       {{S32(2), kControlX}, {TU_SCALAR(XRT_S32), &kControlSel}},
       {{S32(2), kControlG}, {S32(2), kControlH}}},
      {"compute", kCompute, 0, 4, 3,
       {{F32(2, 3), kComputeX}, {F32(3, 2), kComputeY},
        {F32(1, 4, 1), kComputeA}, {F32(2, 1, 1), kComputeW}},
       {{F32(2), kComputeS}, {F32(2, 2), kComputeD}, {F32(1, 3, 1), kComputeC}}},
      {"fuse", kFuse, 1, 2, 2, {{S32(16, 16), kFuseX}, {S32(16), kFuseR}},
       {{S32(16), kFuseS}, {S32(16, 16), kFuseP}}},
      {"loadable", kLoadable, 1, 1, 1, {{F32(2, 3), kComputeX}},
       {{F32(4), kLoadableW}}},
      {"bodies", kBodies, 0, 5, 8,
       {{S32(4), kBodiesX}, {S32(2, 1), kIndexSi}, {S32(2, 2), kIndexU},
        {S32(2, 3), kMoveX}, {S32(2), kBodiesZ}},
       {{S32(4), kBodiesM}, {S32(4), kBodiesDesc}, {S32(4), kBodiesDesc},
        {S32(5), kBodiesSc}, {S32(5), kIndexS}, {S32(3), kBodiesRw},
        {S32(2, 3), kBodiesScan}, {S32(2), kBodiesCarry}}},
      {"zeros", kZeros, 0, 2, 4, {{F32(0), kNothing}, {S32(2), kZerosX}},
       {{F32(0), kNothing}, {F32(0), kNothing}, {S32(2), kZerosW},
        {F32(0), kNothing}}},
      {"select_and_scatter", kSas, 0, 2, 1,
       {{S32(4), kBodiesX}, {S32(2), kSasSrc}}, {{S32(4), kSasR}}},
  };
  memcpy(g_cases, c, sizeof c);
}

static size_t io_bytes(const io *x) {
  size_t n = xrt_dtype_size(x->shape.dtype);
  for (int d = 0; d < x->shape.rank; d++) n *= (size_t)x->shape.dims[d];
  return n;
}

/* ---- one walk_round ---- */

typedef struct walk_round {
  const program_case *pc;
  const xrt_ir_module *m;
  int32_t entry;
  tu_counting_alloc al;
  int steps_ok; /* calls that came through */
} walk_round;

/* A call's status: OK, or RESOURCE_EXHAUSTED with a message about memory
 * once the allocator has failed; anything else fails the test. */
static int ok_or_oom(walk_round *r, xrt_status st, const xrt_plugin_error *err,
                     const char *what, long n) {
  if (st == XRT_OK) {
    r->steps_ok++;
    return 1;
  }
  if (st != XRT_RESOURCE_EXHAUSTED)
    fail_msg("%s, N = %ld: %s: status %d: %s", r->pc->name, n, what, (int)st,
             err ? err->message : "");
  if (!atomic_load(&r->al.failed))
    fail_msg("%s, N = %ld: %s: out of memory before the allocator failed",
             r->pc->name, n, what);
  if (err && !strstr(err->message, "memory"))
    fail_msg("%s, N = %ld: %s: message \"%s\" names no memory", r->pc->name,
             n, what, err->message);
  return 0;
}

/* Uploads, runs exe and checks its results; 0 when something ran out of
 * memory. */
static int run_and_check(walk_round *r, const xrt_plugin_api *api, void *pc,
                         void *exe, long n) {
  const program_case *c = r->pc;
  void *ins[MAX_IO] = {0}, *outs[MAX_IO] = {0};
  xrt_plugin_error err;
  int good = 1;
  for (int i = 0; good && i < c->nin; i++) {
    size_t b = io_bytes(&c->in[i]);
    good = ok_or_oom(r, api->buffer_alloc(pc, 0, b, &ins[i], &err), &err,
                     "buffer_alloc", n) &&
           ok_or_oom(r, api->buffer_write(pc, 0, ins[i], c->in[i].data, b,
                                          &err),
                     &err, "buffer_write", n);
  }
  for (int i = 0; good && i < c->nout; i++)
    good = ok_or_oom(r, api->buffer_alloc(pc, 0, io_bytes(&c->out[i]),
                                          &outs[i], &err),
                     &err, "buffer_alloc", n);
  if (good) {
    xrt_plugin_execute_args a =
        tu_plugin_exec(exe, ins, c->nin, outs, c->nout);
    good = ok_or_oom(r, api->execute(pc, &a, &err), &err, "execute", n);
  }
  for (int i = 0; good && i < c->nout; i++) {
    size_t b = io_bytes(&c->out[i]);
    void *h = malloc(b ? b : 1);
    assert_non_null(h);
    assert_int_equal(api->buffer_read(pc, 0, outs[i], h, b, &err), XRT_OK);
    if (memcmp(h, c->out[i].data, b) != 0)
      fail_msg("%s, N = %ld: result %d differs", c->name, n, i);
    free(h);
  }
  for (int i = 0; i < c->nin; i++)
    if (ins[i]) api->buffer_free(pc, 0, ins[i]);
  for (int i = 0; i < c->nout; i++)
    if (outs[i]) api->buffer_free(pc, 0, outs[i]);
  return good;
}

/* ---- injected kernel faults ---- */

static void fault_walk(const program_case *c) {
  const xrt_plugin_api *api = xrt_sim_plugin_api();
  xrt_program *p = NULL;
  int32_t entry;
  const xrt_ir_module *m = tu_parse_main(c->text, c->name, &p, &entry);
  void *pc = tu_sim_plugin_client(1 << 22), *exe = NULL;
  int32_t dev = 0;
  xrt_plugin_compile_args a = tu_plugin_compile_args(m, entry, &dev);
  xrt_plugin_error err;
  if (api->compile(pc, &a, &exe, &err) != XRT_OK)
    fail_msg("%s: %s", c->name, err.message);
  void *ins[MAX_IO] = {0}, *outs[MAX_IO] = {0};
  for (int i = 0; i < c->nin; i++) {
    size_t b = io_bytes(&c->in[i]);
    assert_int_equal(api->buffer_alloc(pc, 0, b, &ins[i], &err), XRT_OK);
    assert_int_equal(api->buffer_write(pc, 0, ins[i], c->in[i].data, b, &err),
                     XRT_OK);
  }
  for (int i = 0; i < c->nout; i++)
    assert_int_equal(api->buffer_alloc(pc, 0, io_bytes(&c->out[i]), &outs[i],
                                       &err),
                     XRT_OK);
  xrt_plugin_execute_args x = tu_plugin_exec(exe, ins, c->nin, outs, c->nout);
  long k = 0;
  for (;; k++) {
    assert_int_equal(api->inject_fault(pc, 0, k, &err), XRT_OK);
    xrt_status st = api->execute(pc, &x, &err);
    if (st == XRT_OK) break;
    if (st != XRT_INTERNAL)
      fail_msg("%s, fault after %ld: status %d: %s", c->name, k, (int)st,
               err.message);
    char want[96];
    snprintf(want, sizeof want, "device 0: injected fault after %ld steps of "
             "@main, in the ", k);
    TU_ASSERT_PREFIX(err.message, want);
    if (k > 10000) fail_msg("%s: no end in sight", c->name);
  }
  /* every program has several kernels */
  assert_true(k >= 3);
  for (int i = 0; i < c->nout; i++) {
    size_t b = io_bytes(&c->out[i]);
    void *h = malloc(b ? b : 1);
    assert_non_null(h);
    assert_int_equal(api->buffer_read(pc, 0, outs[i], h, b, &err), XRT_OK);
    if (memcmp(h, c->out[i].data, b) != 0)
      fail_msg("%s: result %d differs after the faults", c->name, i);
    free(h);
  }
  for (int i = 0; i < c->nin; i++) api->buffer_free(pc, 0, ins[i]);
  for (int i = 0; i < c->nout; i++) api->buffer_free(pc, 0, outs[i]);
  api->executable_destroy(exe);
  api->client_destroy(pc);
  xrt_program_release(p);
}

static void test_injected_faults(void **state) {
  (void)state;
  cases_init();
  for (size_t k = 0; k < TU_COUNT(g_cases); k++) fault_walk(&g_cases[k]);
}

/* The round of fail_at n: 1 when every call came through. */
static int one_round(walk_round *r, long n, bool persistent) {
  const xrt_plugin_api *api = xrt_sim_plugin_api();
  tu_counting_init(&r->al, n);
  r->al.persistent = persistent;
  r->steps_ok = 0;
  xrt_plugin_client_args ca;
  memset(&ca, 0, sizeof ca);
  ca.struct_size = sizeof ca;
  ca.num_devices = 1;
  ca.device_memory_bytes = 1 << 22;
  ca.allocator = tu_counting_allocator(&r->al);
  ca.threads_per_device = 1;
  void *pc = NULL, *exe = NULL, *back = NULL, *bytes = NULL;
  size_t nbytes = 0;
  xrt_plugin_error err;
  int done = 0;
  if (!ok_or_oom(r, api->client_create(&ca, &pc, &err), &err, "client_create",
                 n))
    goto out;
  int32_t dev = 0;
  xrt_plugin_compile_args a = tu_plugin_compile_args(r->m, r->entry, &dev);
  if (!ok_or_oom(r, api->compile(pc, &a, &exe, &err), &err, "compile", n))
    goto out;
  if (!run_and_check(r, api, pc, exe, n)) goto out;
  if (!ok_or_oom(r, api->executable_serialize(exe, &bytes, &nbytes, &err),
                 &err, "executable_serialize", n))
    goto out;
  xrt_plugin_compile_args d = a;
  d.module = NULL;
  d.entry = -1;
  xrt_shape ins[MAX_IO], outs[MAX_IO];
  const xrt_ir_func *f = &r->m->funcs[r->entry];
  for (int32_t i = 0; i < f->body.num_args; i++)
    ins[i] = f->value_types[f->body.args[i]].shape;
  for (int32_t i = 0; i < f->num_results; i++)
    outs[i] = f->result_types[i].shape;
  d.num_inputs = f->body.num_args;
  d.num_outputs = f->num_results;
  d.input_shapes = ins;
  d.output_shapes = outs;
  xrt_status st = api->executable_deserialize(pc, &d, bytes, nbytes, &back,
                                             &err);
  if (!r->pc->loadable) {
    /* refused as a whole (the core then compiles) */
    if (st == XRT_INVALID_ARGUMENT) {
      if (!strstr(err.message, "op not loadable from serialized bytes") &&
          !strstr(err.message, "unexpected region"))
        fail_msg("%s, N = %ld: %s", r->pc->name, n, err.message);
      done = 1;
      goto out;
    }
  }
  if (!ok_or_oom(r, st, &err, "executable_deserialize", n)) goto out;
  if (!run_and_check(r, api, pc, back, n)) goto out;
  done = 1;
out:
  if (bytes) api->serialized_free(bytes);
  if (back) api->executable_destroy(back);
  if (exe) api->executable_destroy(exe);
  if (pc) api->client_destroy(pc);
  if (atomic_load(&r->al.live) != 0)
    fail_msg("%s, N = %ld%s: %ld block(s) leaked", r->pc->name, n,
             persistent ? " on" : "", (long)atomic_load(&r->al.live));
  if (done && atomic_load(&r->al.failed) && !persistent) {
    /* a failure that every call survived: a retry or a fallback; fine */
  }
  return done && !atomic_load(&r->al.failed);
}

/* Calls fn on a round of each program case, parsed. */
static void each_case(void (*fn)(walk_round *r, bool persistent),
                      bool persistent) {
  cases_init();
  for (size_t k = 0; k < TU_COUNT(g_cases); k++) {
    walk_round r;
    memset(&r, 0, sizeof r);
    r.pc = &g_cases[k];
    xrt_program *p = NULL;
    r.m = tu_parse_main(r.pc->text, r.pc->name, &p, &r.entry);
    fn(&r, persistent);
    xrt_program_release(p);
  }
}

static void walk_case(walk_round *r, bool persistent) {
  long n = 1;
  while (!one_round(r, n, persistent)) {
    n++;
    if (n > 100000) fail_msg("%s: no end in sight", r->pc->name);
  }
  print_message("%s: %ld allocation(s)\n", r->pc->name, n - 1);
  /* the allocations of a whole round: at least one per call */
  assert_true(n > 10);
}

static void walk(bool persistent) { each_case(walk_case, persistent); }

static void complete_case(walk_round *r, bool persistent) {
  if (!one_round(r, 0, persistent))
    fail_msg("%s did not complete", r->pc->name);
}

/* The programs run right with an allocator that never fails. */
static void test_programs(void **state) {
  (void)state;
  each_case(complete_case, false);
}

static void test_every_allocation_fails_once(void **state) {
  (void)state;
  walk(false);
}

static void test_allocations_fail_from_n_on(void **state) {
  (void)state;
  walk(true);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_programs),
        cmocka_unit_test(test_every_allocation_fails_once),
        cmocka_unit_test(test_allocations_fail_from_n_on),
        cmocka_unit_test(test_injected_faults))
