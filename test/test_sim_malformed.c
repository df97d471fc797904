/*
 * test_sim_malformed.c - single ops the verifier would refuse, built by
 * hand with the plugin ABI's IR structs and compiled through the
 * simulator's plugin table: the simulator's lowerers (src/sim/lower.c,
 * plan.c, exec.c) check what they rely on themselves, so that a module a
 * core failed to verify, or bytes read back from a cache, are refused
 * with XRT_INVALID_ARGUMENT (or XRT_UNIMPLEMENTED) and a message instead
 * of a kernel reading out of bounds.  Each case names the check's
 * message.  A well-formed op of each kind compiles, as a control.  Issue
 * #25 (coverage of src/sim).
 */
#include "test_plugin_abi.h"

static const xrt_plugin_api *api(void) { return xrt_sim_plugin_api(); }

/* Set: compile_op also serializes what compiled and loads the bytes back,
 * and returns the load's status. */
static int g_round_trip;

/* One op (values 0..nin-1 in, nin.. out) and a return of nothing, as the
 * module's only function; compiled by the simulator's table.  The
 * status; the message in err. */
static xrt_status compile_op(xrt_opcode code, const char *name, int nin,
                             const xrt_ir_type *tin, int nout,
                             const xrt_ir_type *tout, int nattrs,
                             const xrt_ir_attr *attrs, xrt_plugin_error *err) {
  tu_ir_one o;
  tu_ir_one_op(&o, code, name, nin, tin, nout, tout, nattrs, attrs);
  /* the same file name at two addresses (the writer repeats it by
   * content) */
  static const char file_a[] = "m.mlir", file_b[] = "m.mlir";
  o.ops[0].loc.file = file_a;
  o.ops[0].loc.line = 1;
  o.ops[1].loc.file = file_b;
  o.ops[1].loc.line = 2;
  void *pc = tu_sim_plugin_client(1 << 20), *exe = NULL;
  xrt_status st = tu_sim_compile_on(pc, &o.m, &exe, err);
  if (st == XRT_OK && g_round_trip) {
    void *bytes = NULL, *back = NULL;
    size_t n = 0;
    xrt_shape ins[8];
    for (int i = 0; i < nin; i++) ins[i] = o.types[i].shape;
    st = api()->executable_serialize(exe, &bytes, &n, err);
    if (st == XRT_OK) {
      const int32_t dev = 0;
      xrt_plugin_compile_args d = tu_plugin_compile_args(NULL, -1, &dev);
      d.num_inputs = nin;
      d.input_shapes = ins;
      st = api()->executable_deserialize(pc, &d, bytes, n, &back, err);
      if (st == XRT_OK) api()->executable_destroy(back);
      api()->serialized_free(bytes);
    }
  }
  if (exe) api()->executable_destroy(exe);
  api()->client_destroy(pc);
  return st;
}

#define REFUSED(want, why, ...)                                             \
  TU_EXPECT_PLUGIN(want, why, compile_op, __VA_ARGS__)
#define COMPILES(...) REFUSED(XRT_OK, NULL, __VA_ARGS__)

static void test_shape_ops(void **state) {
  (void)state;
  const xrt_ir_type f2 = tu_ty(XRT_F32, 1, 2, 0), f3 = tu_ty(XRT_F32, 1, 3, 0);
  const xrt_ir_type f23 = tu_ty(XRT_F32, 2, 2, 3),
                    f32 = tu_ty(XRT_F32, 2, 3, 2);
  const xrt_ir_type f6 = tu_ty(XRT_F32, 1, 6, 0), f5 = tu_ty(XRT_F32, 1, 5, 0);
  /* constant without a value */
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.constant needs a dense 'value'",
          XRT_OP_CONSTANT, "stablehlo.constant", 0, NULL, 1, &f2, 0, NULL);
  /* iota along a dimension the result does not have */
  xrt_ir_attr a[4];
  a[0] = tu_ir_int("iota_dimension", 1);
  REFUSED(XRT_INVALID_ARGUMENT, "iota_dimension 1 is out of range",
          XRT_OP_IOTA, "stablehlo.iota", 0, NULL, 1, &f2, 1, a);
  a[0] = tu_ir_int("iota_dimension", 0);
  COMPILES(XRT_OP_IOTA, "stablehlo.iota", 0, NULL, 1, &f2, 1, a);
  /* broadcast_in_dim: a list of the wrong length, a dimension out of
   * range */
  const int64_t d1[1] = {1}, d5[1] = {5}, d10[2] = {1, 0}, d00[2] = {0, 0};
  a[0] = tu_ir_ints("broadcast_dimensions", d1, 0);
  REFUSED(XRT_INVALID_ARGUMENT, "bad broadcast_dimensions",
          XRT_OP_BROADCAST_IN_DIM, "stablehlo.broadcast_in_dim", 1, &f3, 1,
          &f23, 1, a);
  a[0] = tu_ir_ints("broadcast_dimensions", d5, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "bad broadcast_dimensions",
          XRT_OP_BROADCAST_IN_DIM, "stablehlo.broadcast_in_dim", 1, &f3, 1,
          &f23, 1, a);
  a[0] = tu_ir_ints("broadcast_dimensions", d1, 1);
  COMPILES(XRT_OP_BROADCAST_IN_DIM, "stablehlo.broadcast_in_dim", 1, &f3, 1,
           &f23, 1, a);
  /* the legacy broadcast to a lower rank */
  a[0] = tu_ir_ints("broadcast_sizes", d1, 0);
  REFUSED(XRT_INVALID_ARGUMENT, "bad broadcast", XRT_OP_BROADCAST,
          "stablehlo.broadcast", 1, &f23, 1, &f3, 1, a);
  /* transpose: a short permutation, an index out of range */
  a[0] = tu_ir_ints("permutation", d10, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "bad permutation", XRT_OP_TRANSPOSE,
          "stablehlo.transpose", 1, &f23, 1, &f32, 1, a);
  const int64_t p15[2] = {1, 5};
  a[0] = tu_ir_ints("permutation", p15, 2);
  REFUSED(XRT_INVALID_ARGUMENT, "bad permutation", XRT_OP_TRANSPOSE,
          "stablehlo.transpose", 1, &f23, 1, &f32, 1, a);
  a[0] = tu_ir_ints("permutation", d10, 2);
  COMPILES(XRT_OP_TRANSPOSE, "stablehlo.transpose", 1, &f23, 1, &f32, 1, a);
  /* slice: start indices of the wrong length */
  const int64_t s0[1] = {0}, s2[1] = {2};
  a[0] = tu_ir_ints("start_indices", s0, 1);
  a[1] = tu_ir_ints("limit_indices", s2, 1);
  a[2] = tu_ir_ints("strides", d1, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "bad slice", XRT_OP_SLICE, "stablehlo.slice", 1,
          &f23, 1, &f2, 3, a);
  COMPILES(XRT_OP_SLICE, "stablehlo.slice", 1, &f3, 1, &f2, 3, a);
  /* reverse of a dimension the operand does not have */
  a[0] = tu_ir_ints("dimensions", d5, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "bad reverse dimensions", XRT_OP_REVERSE,
          "stablehlo.reverse", 1, &f3, 1, &f3, 1, a);
  /* reverse of the same dimension twice is once */
  a[0] = tu_ir_ints("dimensions", d00, 2);
  COMPILES(XRT_OP_REVERSE, "stablehlo.reverse", 1, &f3, 1, &f3, 1, a);
  /* reshape to another number of elements */
  REFUSED(XRT_INVALID_ARGUMENT, "reshape changes the number of elements",
          XRT_OP_RESHAPE, "stablehlo.reshape", 1, &f6, 1, &f5, 0, NULL);
  COMPILES(XRT_OP_RESHAPE, "stablehlo.reshape", 1, &f6, 1, &f23, 0, NULL);
  /* optimization_barrier with fewer results than operands */
  const xrt_ir_type two[2] = {f2, f3};
  REFUSED(XRT_INVALID_ARGUMENT, "bad optimization_barrier",
          XRT_OP_OPTIMIZATION_BARRIER, "stablehlo.optimization_barrier", 2,
          two, 1, &f2, 0, NULL);
  /* pad: edges of the wrong length */
  const xrt_ir_type padin[2] = {f3, tu_ty(XRT_F32, 0, 0, 0)};
  a[0] = tu_ir_ints("edge_padding_low", d00, 2);
  a[1] = tu_ir_ints("edge_padding_high", d00, 1);
  a[2] = tu_ir_ints("interior_padding", d00, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "bad pad", XRT_OP_PAD, "stablehlo.pad", 2,
          padin, 1, &f3, 3, a);
  a[0] = tu_ir_ints("edge_padding_low", d00, 1);
  COMPILES(XRT_OP_PAD, "stablehlo.pad", 2, padin, 1, &f3, 3, a);
  /* concatenate along a dimension the result does not have */
  const xrt_ir_type cat[2] = {f2, f3};
  a[0] = tu_ir_int("dimension", 1);
  REFUSED(XRT_INVALID_ARGUMENT, "bad concatenate dimension",
          XRT_OP_CONCATENATE, "stablehlo.concatenate", 2, cat, 1, &f5, 1, a);
  a[0] = tu_ir_int("dimension", 0);
  COMPILES(XRT_OP_CONCATENATE, "stablehlo.concatenate", 2, cat, 1, &f5, 1, a);
  /* get_dimension_size of a dimension the operand does not have */
  const xrt_ir_type i32s = tu_ty(XRT_S32, 0, 0, 0);
  a[0] = tu_ir_int("dimension", 2);
  REFUSED(XRT_INVALID_ARGUMENT, "bad get_dimension_size",
          XRT_OP_GET_DIMENSION_SIZE, "stablehlo.get_dimension_size", 1, &f23,
          1, &i32s, 1, a);
  a[0] = tu_ir_int("dimension", 1);
  COMPILES(XRT_OP_GET_DIMENSION_SIZE, "stablehlo.get_dimension_size", 1, &f23,
           1, &i32s, 1, a);
}

static void test_values(void **state) {
  (void)state;
  const xrt_ir_type f2 = tu_ty(XRT_F32, 1, 2, 0);
  /* an elementwise op with two results */
  const xrt_ir_type two[2] = {f2, f2};
  REFUSED(XRT_UNIMPLEMENTED, "stablehlo.add with 2 operands and 2 results is "
          "not supported by the simulator",
          XRT_OP_ADD, "stablehlo.add", 2, two, 2, two, 0, NULL);
  /* a value of no element type */
  const xrt_ir_type bad[2] = {f2, tu_ty(XRT_DTYPE_INVALID, 1, 2, 0)};
  REFUSED(XRT_UNIMPLEMENTED, "stablehlo.add: a value has an element type the "
          "simulator cannot store",
          XRT_OP_ADD, "stablehlo.add", 2, bad, 1, &f2, 0, NULL);
  /* a tuple operand of an op that takes tensors */
  xrt_ir_type tup;
  memset(&tup, 0, sizeof tup);
  tup.kind = XRT_TYPE_TUPLE;
  tup.num_elems = 2;
  tup.elems = two;
  const xrt_ir_type withtup[2] = {f2, tup};
  REFUSED(XRT_UNIMPLEMENTED, "stablehlo.add: tuple and token values are not "
          "supported by the simulator",
          XRT_OP_ADD, "stablehlo.add", 2, withtup, 1, &f2, 0, NULL);
  COMPILES(XRT_OP_ADD, "stablehlo.add", 2, two, 1, &f2, 0, NULL);
}

/* Ops that need regions, given none; index ops given bad operands;
 * calls of nothing. */
static void test_structure_ops(void **state) {
  (void)state;
  const xrt_ir_type f2 = tu_ty(XRT_F32, 1, 2, 0), f3 = tu_ty(XRT_F32, 1, 3, 0);
  const xrt_ir_type f32s = tu_ty(XRT_F32, 0, 0, 0),
                    i32s = tu_ty(XRT_S32, 0, 0, 0);
  const xrt_ir_type pred = tu_ty(XRT_PRED, 0, 0, 0);
  const xrt_ir_type two[2] = {f2, f32s}, f22[2] = {f2, f2};
  REFUSED(XRT_INVALID_ARGUMENT, "bad while", XRT_OP_WHILE, "stablehlo.while",
          1, &f2, 1, &f2, 0, NULL);
  const xrt_ir_type ifin[1] = {pred};
  REFUSED(XRT_INVALID_ARGUMENT, "bad stablehlo.if", XRT_OP_IF, "stablehlo.if",
          1, ifin, 1, &f2, 0, NULL);
  REFUSED(XRT_INVALID_ARGUMENT, "bad stablehlo.case", XRT_OP_CASE,
          "stablehlo.case", 1, &f2, 1, &f2, 0, NULL);
  REFUSED(XRT_INVALID_ARGUMENT, "bad sort", XRT_OP_SORT, "stablehlo.sort", 1,
          &f2, 1, &f2, 0, NULL);
  REFUSED(XRT_INVALID_ARGUMENT, "bad map", XRT_OP_MAP, "stablehlo.map", 1, &f2,
          1, &f2, 0, NULL);
  xrt_ir_attr a[2];
  const int64_t d0[1] = {0};
  a[0] = tu_ir_ints("dimensions", d0, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "bad reduce", XRT_OP_REDUCE,
          "stablehlo.reduce", 2, two, 1, &f32s, 1, a);
  const xrt_ir_type sc[3] = {f3, tu_ty(XRT_S32, 2, 1, 1),
                             tu_ty(XRT_F32, 2, 1, 1)};
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.scatter: bad operands",
          XRT_OP_SCATTER, "stablehlo.scatter", 3, sc, 1, &f3, 0, NULL);
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.reduce_window: bad operands",
          XRT_OP_REDUCE_WINDOW, "stablehlo.reduce_window", 2, two, 1, &f2, 0,
          NULL);
  const xrt_ir_type sas[3] = {f2, f2, f32s};
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.select_and_scatter: bad operands",
          XRT_OP_SELECT_AND_SCATTER, "stablehlo.select_and_scatter", 3, sas, 1,
          &f2, 0, NULL);
  a[0] = tu_ir_int("dimension", 0);
  REFUSED(XRT_INVALID_ARGUMENT, "bad chlo.scan", XRT_OP_CHLO_SCAN,
          "chlo.scan", 1, &f2, 1, &f2, 1, a);
  /* gather without its dimension numbers */
  const xrt_ir_type ga[2] = {f3, tu_ty(XRT_S32, 1, 1, 0)};
  const int64_t one[1] = {1};
  a[0] = tu_ir_ints("slice_sizes", one, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.gather: bad dimension_numbers",
          XRT_OP_GATHER, "stablehlo.gather", 2, ga, 1, &f2, 1, a);
  /* dynamic_slice: a float start, a slice larger than the operand, a
   * start per dimension missing */
  const int64_t two_[1] = {2}, five[1] = {5};
  const xrt_ir_type dsf[2] = {f3, f32s}, dsi[2] = {f3, i32s};
  a[0] = tu_ir_ints("slice_sizes", two_, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.dynamic_slice: bad start index",
          XRT_OP_DYNAMIC_SLICE, "stablehlo.dynamic_slice", 2, dsf, 1, &f2, 1,
          a);
  a[0] = tu_ir_ints("slice_sizes", five, 1);
  const xrt_ir_type f5 = tu_ty(XRT_F32, 1, 5, 0);
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.dynamic_slice: bad slice sizes",
          XRT_OP_DYNAMIC_SLICE, "stablehlo.dynamic_slice", 2, dsi, 1, &f5, 1,
          a);
  a[0] = tu_ir_ints("slice_sizes", two_, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.dynamic_slice: bad operands",
          XRT_OP_DYNAMIC_SLICE, "stablehlo.dynamic_slice", 1, &f3, 1, &f2, 1,
          a);
  COMPILES(XRT_OP_DYNAMIC_SLICE, "stablehlo.dynamic_slice", 2, dsi, 1, &f2, 1,
           a);
  /* dynamic_update_slice of an update of another element size */
  const xrt_ir_type dus[3] = {f3, tu_ty(XRT_F64, 1, 2, 0), i32s};
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.dynamic_update_slice: bad update "
          "type",
          XRT_OP_DYNAMIC_UPDATE_SLICE, "stablehlo.dynamic_update_slice", 3,
          dus, 1, &f3, 0, NULL);
  /* tuples of non-tuples */
  REFUSED(XRT_INVALID_ARGUMENT, "bad tuple", XRT_OP_TUPLE, "stablehlo.tuple",
          2, f22, 1, &f2, 0, NULL);
  a[0] = tu_ir_int("index", 0);
  REFUSED(XRT_INVALID_ARGUMENT, "bad get_tuple_element",
          XRT_OP_GET_TUPLE_ELEMENT, "stablehlo.get_tuple_element", 1, &f2, 1,
          &f2, 1, a);
  /* after_all of a tensor */
  REFUSED(XRT_INVALID_ARGUMENT, "after_all takes and makes tokens",
          XRT_OP_AFTER_ALL, "stablehlo.after_all", 1, &f2, 0, NULL, 0, NULL);
  /* a call of no function; a composite without, or with an unknown,
   * decomposition */
  REFUSED(XRT_INVALID_ARGUMENT, "func.call of an unknown function",
          XRT_OP_FUNC_CALL, "func.call", 1, &f2, 1, &f2, 0, NULL);
  REFUSED(XRT_INVALID_ARGUMENT, "composite needs the symbol attribute "
          "'decomposition'",
          XRT_OP_COMPOSITE, "stablehlo.composite", 1, &f2, 1, &f2, 0, NULL);
  memset(&a[0], 0, sizeof a[0]);
  a[0].name = "decomposition";
  a[0].kind = XRT_ATTR_SYMBOL;
  a[0].s = "nowhere";
  REFUSED(XRT_NOT_FOUND, "composite decomposition @nowhere is not a function "
          "of the module",
          XRT_OP_COMPOSITE, "stablehlo.composite", 1, &f2, 1, &f2, 1, a);
  /* dynamic shapes given as floats, or of the wrong length */
  const xrt_ir_type f6 = tu_ty(XRT_F32, 1, 6, 0), f23 = tu_ty(XRT_F32, 2, 2, 3);
  const xrt_ir_type rsf[2] = {f6, tu_ty(XRT_F32, 1, 2, 0)};
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.dynamic_reshape: output_shape must "
          "be a 1-d integer tensor of 2 elements",
          XRT_OP_DYNAMIC_RESHAPE, "stablehlo.dynamic_reshape", 2, rsf, 1, &f23,
          0, NULL);
  const xrt_ir_type rsi[2] = {f6, tu_ty(XRT_S64, 1, 3, 0)};
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.dynamic_reshape: output_shape must "
          "be a 1-d integer tensor of 2 elements",
          XRT_OP_DYNAMIC_RESHAPE, "stablehlo.dynamic_reshape", 2, rsi, 1, &f23,
          0, NULL);
  const xrt_ir_type rs2[2] = {f6, tu_ty(XRT_S64, 1, 2, 0)};
  COMPILES(XRT_OP_DYNAMIC_RESHAPE, "stablehlo.dynamic_reshape", 2, rs2, 1,
           &f23, 0, NULL);
  /* dynamic_pad: a float padding operand; a result of another rank */
  const xrt_ir_type i1v = tu_ty(XRT_S64, 1, 1, 0),
                    f1v = tu_ty(XRT_F32, 1, 1, 0);
  const xrt_ir_type dp[5] = {f3, f32s, f1v, i1v, i1v};
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.dynamic_pad: bad padding operand",
          XRT_OP_DYNAMIC_PAD, "stablehlo.dynamic_pad", 5, dp, 1, &f5, 0, NULL);
  const xrt_ir_type dpi[5] = {f3, f32s, i1v, i1v, i1v};
  REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.dynamic_pad: bad operand types",
          XRT_OP_DYNAMIC_PAD, "stablehlo.dynamic_pad", 5, dpi, 1, &f23, 0,
          NULL);
  COMPILES(XRT_OP_DYNAMIC_PAD, "stablehlo.dynamic_pad", 5, dpi, 1, &f5, 0,
           NULL);
  /* the legacy dot of rank 3 */
  const xrt_ir_type d3[2] = {tu_ty(XRT_F32, 3, 1, 1), tu_ty(XRT_F32, 2, 1, 1)};
  REFUSED(XRT_INVALID_ARGUMENT, "bad dot", XRT_OP_DOT, "stablehlo.dot", 2, d3,
          1, &f2, 0, NULL);
}

/* all_reduce of f32[2] with attrs, and a reduction region of nargs
 * scalar arguments (0: no region) adding the first two. */
static xrt_status compile_all_reduce(int nargs, int nattrs,
                                     const xrt_ir_attr *attrs,
                                     xrt_plugin_error *err) {
  xrt_ir_type types[5] = {tu_ty(XRT_F32, 1, 2, 0), tu_ty(XRT_F32, 1, 2, 0),
                          tu_ty(XRT_F32, 0, 0, 0), tu_ty(XRT_F32, 0, 0, 0),
                          tu_ty(XRT_F32, 0, 0, 0)};
  const int32_t in = 0, out = 1, rargs[2] = {2, 3}, sum = 4;
  xrt_ir_op rops[2];
  tu_ir_op(&rops[0], XRT_OP_ADD, "stablehlo.add", 2, rargs, 1, &sum);
  tu_ir_op(&rops[1], XRT_OP_RETURN, "stablehlo.return", 1, &sum, 0, NULL);
  xrt_ir_region reg = tu_ir_block(nargs, rargs, 2, rops);
  xrt_ir_op ops[2];
  tu_ir_op(&ops[0], XRT_OP_ALL_REDUCE, "stablehlo.all_reduce", 1, &in, 1,
           &out);
  ops[0].num_attrs = nattrs;
  ops[0].attrs = attrs;
  ops[0].num_regions = nargs ? 1 : 0;
  ops[0].regions = &reg;
  tu_ir_op(&ops[1], XRT_OP_FUNC_RETURN, "func.return", 1, &out, 0, NULL);
  xrt_ir_func f;
  tu_ir_main(&f, 5, types, 1, &in, 2, ops);
  f.num_results = 1;
  f.result_types = &types[1];
  xrt_ir_module m;
  tu_ir_module(&m, &f, 1);
  return tu_sim_compile_module(&m, err);
}

static void test_collective_ops(void **state) {
  (void)state;
  xrt_plugin_error err;
  const int64_t zero[1] = {0};
  xrt_ir_attr a[2];
  a[0] = tu_ir_ints("replica_groups", zero, 1); /* a flat list: one group */
  assert_int_equal(compile_all_reduce(2, 1, a, &err), XRT_OK);
  assert_int_equal(compile_all_reduce(0, 1, a, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "stablehlo.all_reduce needs a computation "
                                  "region");
  assert_int_equal(compile_all_reduce(1, 1, a, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "stablehlo.all_reduce: the computation must "
                                  "take 2 arguments");
  memset(&a[1], 0, sizeof a[1]);
  a[1].name = "use_global_device_ids";
  a[1].kind = XRT_ATTR_UNIT;
  assert_int_equal(compile_all_reduce(2, 2, a, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "stablehlo.all_reduce: use_global_device_ids "
                                  "needs a channel_handle with handle > 0");
  a[0] = tu_ir_int("replica_groups", 0);
  assert_int_equal(compile_all_reduce(2, 1, a, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "stablehlo.all_reduce: replica_groups must "
                                  "be a 2-dimensional integer tensor");
}

/* Ops the planner takes (it looks at element sizes) but whose types say
 * something else: compiled, serialized and loaded back, the validator of
 * loaded bytes refuses them (a stricter check than the planner's). */
static void test_loaded_types(void **state) {
  (void)state;
  g_round_trip = 1;
  const xrt_ir_type f6 = tu_ty(XRT_F32, 1, 6, 0), i23 = tu_ty(XRT_S32, 2, 2, 3);
  const xrt_ir_type f23 = tu_ty(XRT_F32, 2, 2, 3),
                    i32 = tu_ty(XRT_S32, 2, 3, 2);
  const xrt_ir_type f3 = tu_ty(XRT_F32, 1, 3, 0);
  COMPILES(XRT_OP_RESHAPE, "stablehlo.reshape", 1, &f6, 1, &f23, 0, NULL);
  REFUSED(XRT_INVALID_ARGUMENT, "bad reshape", XRT_OP_RESHAPE,
          "stablehlo.reshape", 1, &f6, 1, &i23, 0, NULL);
  xrt_ir_attr a[1];
  const int64_t p10[2] = {1, 0}, d1[1] = {1};
  a[0] = tu_ir_ints("permutation", p10, 2);
  REFUSED(XRT_INVALID_ARGUMENT, "bad transpose", XRT_OP_TRANSPOSE,
          "stablehlo.transpose", 1, &f23, 1, &i32, 1, a);
  a[0] = tu_ir_ints("broadcast_dimensions", d1, 1);
  REFUSED(XRT_INVALID_ARGUMENT, "bad broadcast_in_dim",
          XRT_OP_BROADCAST_IN_DIM, "stablehlo.broadcast_in_dim", 1, &f3, 1,
          &i23, 1, a);
  /* an entry that takes a token: it compiles, but bytes that say so are
   * not loaded (the core hands the entry buffers) */
  xrt_ir_type tok;
  memset(&tok, 0, sizeof tok);
  tok.kind = XRT_TYPE_TOKEN;
  REFUSED(XRT_INVALID_ARGUMENT, "the entry takes a value that is not a "
          "tensor",
          XRT_OP_AFTER_ALL, "stablehlo.after_all", 1, &tok, 1, &tok, 0, NULL);
  g_round_trip = 0;
}

/* ---- ops with regions ---- */

/* A region: nargs scalar arguments of type argt; its body applies body
 * (XRT_OP_ADD, XRT_OP_COMPARE, or XRT_OP_INVALID for none) to the first
 * argument (twice) giving a scalar of type rett, and returns that, or,
 * with no body, returns the op's operand ret_outer. */
typedef struct rdesc {
  int nargs;
  xrt_dtype argt;
  xrt_opcode body;
  xrt_dtype rett;
  int ret_outer;
} rdesc;

static xrt_status compile_regions(xrt_opcode code, const char *name, int nin,
                                  const xrt_ir_type *tin, int nout,
                                  const xrt_ir_type *tout, int nattrs,
                                  const xrt_ir_attr *attrs, int nreg,
                                  const rdesc *rd, xrt_plugin_error *err) {
  xrt_ir_type types[32];
  int32_t ids[32];
  int nv = 0;
  for (int i = 0; i < nin + nout; i++) {
    types[nv] = i < nin ? tin[i] : tout[i - nin];
    ids[nv] = nv;
    nv++;
  }
  xrt_ir_op rops[4][2];
  xrt_ir_region regs[4];
  static const xrt_ir_attr dir = {.name = "comparison_direction",
                                  .kind = XRT_ATTR_ENUM, .s = "LT"};
  assert_true(nreg <= 4);
  for (int r = 0; r < nreg; r++) {
    int first = nv;
    for (int a = 0; a < rd[r].nargs; a++) {
      types[nv] = tu_ty(rd[r].argt, 0, 0, 0);
      ids[nv] = nv;
      nv++;
    }
    int k = 0;
    int32_t ret = rd[r].ret_outer;
    if (rd[r].body != XRT_OP_INVALID) {
      types[nv] = tu_ty(rd[r].rett, 0, 0, 0);
      ids[nv] = nv;
      ids[nv + 1] = first, ids[nv + 2] = first; /* the first argument, twice */
      tu_ir_op(&rops[r][0], rd[r].body,
               rd[r].body == XRT_OP_COMPARE ? "stablehlo.compare"
                                            : "stablehlo.add",
               2, &ids[nv + 1], 1, &ids[nv]);
      if (rd[r].body == XRT_OP_COMPARE) {
        rops[r][0].num_attrs = 1;
        rops[r][0].attrs = &dir;
      }
      ret = nv;
      nv += 3;
      k = 1;
    }
    tu_ir_op(&rops[r][k], XRT_OP_RETURN, "stablehlo.return", 1, &ids[ret], 0,
             NULL);
    regs[r] = tu_ir_block(rd[r].nargs, &ids[first], k + 1, rops[r]);
    assert_true(nv < 29);
  }
  xrt_ir_op ops[2];
  tu_ir_op(&ops[0], code, name, nin, ids, nout, ids + nin);
  ops[0].num_attrs = nattrs;
  ops[0].attrs = attrs;
  ops[0].num_regions = nreg;
  ops[0].regions = regs;
  tu_ir_op(&ops[1], XRT_OP_FUNC_RETURN, "func.return", 0, NULL, 0, NULL);
  xrt_ir_func f;
  tu_ir_main(&f, nv, types, nin, ids, 2, ops);
  xrt_ir_module m;
  tu_ir_module(&m, &f, 1);
  return tu_sim_compile_module(&m, err);
}

#define R_REFUSED(want, why, ...)                                           \
  TU_EXPECT_PLUGIN(want, why, compile_regions, __VA_ARGS__)
#define R_COMPILES(...) R_REFUSED(XRT_OK, NULL, __VA_ARGS__)

static void test_region_ops(void **state) {
  (void)state;
  const xrt_ir_type f2 = tu_ty(XRT_F32, 1, 2, 0), f3 = tu_ty(XRT_F32, 1, 3, 0);
  const xrt_ir_type f32s = tu_ty(XRT_F32, 0, 0, 0),
                    pred = tu_ty(XRT_PRED, 0, 0, 0);
  /* if: both branches return the predicate itself (value 0) */
  const xrt_ir_type ifin[1] = {pred};
  const rdesc br[2] = {{0, XRT_F32, XRT_OP_INVALID, XRT_F32, 0},
                       {0, XRT_F32, XRT_OP_INVALID, XRT_F32, 0}};
  R_COMPILES(XRT_OP_IF, "stablehlo.if", 1, ifin, 1, &pred, 0, NULL, 2, br);
  const rdesc br_arg[2] = {{1, XRT_F32, XRT_OP_INVALID, XRT_F32, 0},
                           {0, XRT_F32, XRT_OP_INVALID, XRT_F32, 0}};
  R_REFUSED(XRT_INVALID_ARGUMENT, "a branch of stablehlo.if takes no "
            "arguments",
            XRT_OP_IF, "stablehlo.if", 1, ifin, 1, &pred, 0, NULL, 2, br_arg);
  R_REFUSED(XRT_INVALID_ARGUMENT, "branch 0 of stablehlo.if returns a value "
            "of the wrong type at position 0",
            XRT_OP_IF, "stablehlo.if", 1, ifin, 1, &f3, 0, NULL, 2, br);
  /* sort: a comparator that returns f32; a dimension out of range */
  xrt_ir_attr a[4];
  a[0] = tu_ir_int("dimension", 0);
  const rdesc cmp = {2, XRT_F32, XRT_OP_COMPARE, XRT_PRED, 0};
  R_COMPILES(XRT_OP_SORT, "stablehlo.sort", 1, &f3, 1, &f3, 1, a, 1, &cmp);
  const rdesc cmpf = {2, XRT_F32, XRT_OP_ADD, XRT_F32, 0};
  R_REFUSED(XRT_INVALID_ARGUMENT, "the sort comparator must return "
            "tensor<i1>",
            XRT_OP_SORT, "stablehlo.sort", 1, &f3, 1, &f3, 1, a, 1, &cmpf);
  a[0] = tu_ir_int("dimension", 3);
  R_REFUSED(XRT_INVALID_ARGUMENT, "sort dimension is out of range",
            XRT_OP_SORT, "stablehlo.sort", 1, &f3, 1, &f3, 1, a, 1, &cmp);
  /* sort of two operands of different lengths */
  const xrt_ir_type two[2] = {f3, f2}, twoo[2] = {f3, f2};
  const rdesc cmp4 = {4, XRT_F32, XRT_OP_COMPARE, XRT_PRED, 0};
  a[0] = tu_ir_int("dimension", 0);
  R_REFUSED(XRT_INVALID_ARGUMENT, "sort operands and results must have one "
            "shape",
            XRT_OP_SORT, "stablehlo.sort", 2, two, 2, twoo, 1, a, 1, &cmp4);
  /* map: an operand of another size */
  const int64_t d0[1] = {0};
  a[0] = tu_ir_ints("dimensions", d0, 1);
  const rdesc mb = {1, XRT_F32, XRT_OP_ADD, XRT_F32, 0};
  R_COMPILES(XRT_OP_MAP, "stablehlo.map", 1, &f3, 1, &f3, 1, a, 1, &mb);
  R_REFUSED(XRT_INVALID_ARGUMENT, "map operands and result differ in shape",
            XRT_OP_MAP, "stablehlo.map", 1, &f2, 1, &f3, 1, a, 1, &mb);
  /* scatter: a region of one argument; of f64 arguments over f32 data */
  const xrt_ir_type sc[3] = {f3, tu_ty(XRT_S32, 2, 1, 1),
                             tu_ty(XRT_F32, 2, 1, 1)};
  const int64_t uwd[1] = {1}, sdod[1] = {0};
  xrt_ir_attr dn_items[3];
  dn_items[0] = tu_ir_ints("update_window_dims", uwd, 1);
  dn_items[1] = tu_ir_ints("scatter_dims_to_operand_dims", sdod, 1);
  dn_items[2] = tu_ir_int("index_vector_dim", 1);
  a[0] = tu_ir_dict("scatter_dimension_numbers", dn_items, 3);
  const rdesc sb = {2, XRT_F32, XRT_OP_ADD, XRT_F32, 0};
  R_COMPILES(XRT_OP_SCATTER, "stablehlo.scatter", 3, sc, 1, &f3, 1, a, 1, &sb);
  const rdesc sb1 = {1, XRT_F32, XRT_OP_ADD, XRT_F32, 0};
  R_REFUSED(XRT_INVALID_ARGUMENT, "a region of stablehlo.scatter must take 2 "
            "arguments",
            XRT_OP_SCATTER, "stablehlo.scatter", 3, sc, 1, &f3, 1, a, 1, &sb1);
  const rdesc sb64 = {2, XRT_F64, XRT_OP_ADD, XRT_F64, 0};
  R_REFUSED(XRT_UNIMPLEMENTED, "stablehlo.scatter: a region argument type "
            "that differs from the operand's is not supported by the "
            "simulator",
            XRT_OP_SCATTER, "stablehlo.scatter", 3, sc, 1, &f3, 1, a, 1, &sb64);
  /* reduce_window: window attributes of the wrong length, a zero stride */
  const xrt_ir_type rwin[2] = {f3, f32s};
  const int64_t w2[1] = {2}, w22[2] = {2, 2}, s0[1] = {0};
  a[0] = tu_ir_ints("window_dimensions", w2, 1);
  R_COMPILES(XRT_OP_REDUCE_WINDOW, "stablehlo.reduce_window", 2, rwin, 1, &f2,
             1, a, 1, &sb);
  a[0] = tu_ir_ints("window_dimensions", w22, 2);
  R_REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.reduce_window: bad window "
            "attributes",
            XRT_OP_REDUCE_WINDOW, "stablehlo.reduce_window", 2, rwin, 1, &f2,
            1, a, 1, &sb);
  a[0] = tu_ir_ints("window_dimensions", w2, 1);
  a[1] = tu_ir_ints("window_strides", s0, 1);
  R_REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.reduce_window: bad window "
            "attributes",
            XRT_OP_REDUCE_WINDOW, "stablehlo.reduce_window", 2, rwin, 1, &f2,
            2, a, 1, &sb);
  /* select_and_scatter whose select returns f32 */
  const xrt_ir_type sas[3] = {f3, f2, f32s};
  a[0] = tu_ir_ints("window_dimensions", w2, 1);
  const rdesc sel[2] = {{2, XRT_F32, XRT_OP_COMPARE, XRT_PRED, 0},
                        {2, XRT_F32, XRT_OP_ADD, XRT_F32, 0}};
  R_COMPILES(XRT_OP_SELECT_AND_SCATTER, "stablehlo.select_and_scatter", 3, sas,
             1, &f3, 1, a, 2, sel);
  const rdesc self[2] = {{2, XRT_F32, XRT_OP_ADD, XRT_F32, 0},
                         {2, XRT_F32, XRT_OP_ADD, XRT_F32, 0}};
  R_REFUSED(XRT_INVALID_ARGUMENT, "stablehlo.select_and_scatter: bad select "
            "region result",
            XRT_OP_SELECT_AND_SCATTER, "stablehlo.select_and_scatter", 3, sas,
            1, &f3, 1, a, 2, self);
}

/* ---- functions and blocks ---- */

static void test_blocks(void **state) {
  (void)state;
  xrt_ir_type t2[3] = {tu_ty(XRT_F32, 1, 2, 0), tu_ty(XRT_F32, 1, 2, 0),
                       tu_ty(XRT_F32, 1, 2, 0)};
  int32_t ids[4] = {0, 1, 2, 99};
  xrt_ir_op ops[2];
  tu_ir_op(&ops[0], XRT_OP_ADD, "stablehlo.add", 2, ids, 1, &ids[1]);
  tu_ir_op(&ops[1], XRT_OP_FUNC_RETURN, "func.return", 0, NULL, 0, NULL);
  xrt_ir_func f[2];
  memset(f, 0, sizeof f);
  tu_ir_main(&f[0], 2, t2, 1, ids, 2, ops);
  xrt_ir_module m;
  tu_ir_module(&m, f, 1);
  xrt_plugin_error err;
  assert_int_equal(tu_sim_compile_module(&m, &err), XRT_OK);
  /* an argument id past the values */
  f[0].body.args = &ids[3];
  assert_int_equal(tu_sim_compile_module(&m, &err), XRT_INTERNAL);
  TU_ASSERT_CONTAINS(err.message, "@main: bad argument id");
  f[0].body.args = ids;
  /* an operand id past the values */
  ops[0].operands = &ids[2]; /* 2 and 99 */
  assert_int_equal(tu_sim_compile_module(&m, &err), XRT_INTERNAL);
  TU_ASSERT_CONTAINS(err.message, "stablehlo.add refers to value 2, which "
                                  "does not exist");
  ops[0].operands = ids;
  /* a block without ops; one that ends with an add */
  f[0].body.num_ops = 0;
  assert_int_equal(tu_sim_compile_module(&m, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "@main: a block has no terminator");
  f[0].body.num_ops = 1;
  assert_int_equal(tu_sim_compile_module(&m, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "a block must end with a return, not "
                                  "stablehlo.add");
  f[0].body.num_ops = 2;
  /* a call of @g (one argument) with none */
  xrt_ir_op call[2];
  tu_ir_op(&call[0], XRT_OP_FUNC_CALL, "func.call", 0, NULL, 1, &ids[1]);
  call[0].callee = 1;
  call[1] = ops[1];
  f[0].body.ops = call;
  f[1] = f[0];
  f[1].name = "g";
  f[1].is_public = false;
  f[1].body.ops = ops;
  f[1].num_results = 0;
  m.num_funcs = 2;
  assert_int_equal(tu_sim_compile_module(&m, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "func.call does not match @g");
  /* an op without its required integer list */
  assert_int_equal(compile_op(XRT_OP_TRANSPOSE, "stablehlo.transpose", 1, t2,
                              1, t2, 0, NULL, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "stablehlo.transpose needs the integer list "
                                  "attribute 'permutation'");
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_shape_ops),
        cmocka_unit_test(test_values), cmocka_unit_test(test_structure_ops),
        cmocka_unit_test(test_collective_ops),
        cmocka_unit_test(test_loaded_types), cmocka_unit_test(test_region_ops),
        cmocka_unit_test(test_blocks))
