/* test_sharding_annotations.c - programs with sharding annotations as JAX
 * exports them: mhlo.sharding / sdy.sharding on arguments and results,
 * sdy.mesh, sdy.sharding_constraint, sdy.reshard, custom_call @Sharding
 * (identities on one device, and on several when replicated), split
 * shardings refused on several devices (no automatic partitioning), and
 * shard_map bodies (@SPMDFullToShardShape / @SPMDShardToFullShape, and
 * sdy.manual_computation) run per device on 2 and 4 partitions.
 */
#include "test_util.h"

/* Runs prog (file "prog.mlir") on ndev devices as num_partitions = ndev,
 * each device d with the n floats in[d], its n_out results into out[d].
 * Returns the status; tu_msg holds the message on failure. */
static xrt_status run_per_device(const char *prog, int ndev, int nparts,
                                 const float *const *in, int64_t n,
                                 float **out, int64_t n_out) {
  xrt_client *c = tu_client(ndev, 0, 0);
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = "prog.mlir";
  co.num_partitions = nparts;
  xrt_executable *exe = NULL;
  xrt_buffer *args[4] = {0}, *res[4] = {0};
  xrt_shape shape = TU_SHAPE(XRT_F32, n);
  tu_msg[0] = 0;
  xrt_status s = xrt_compile(c, prog, strlen(prog), &co, &exe);
  for (int d = 0; !s && d < ndev; d++)
    s = xrt_buffer_from_host(c, xrt_executable_device(exe, d), &shape, in[d],
                             &args[d]);
  xrt_buffer *const lists[4][1] = {{args[0]}, {args[1]}, {args[2]}, {args[3]}};
  xrt_buffer *const *arg_lists[4] = {lists[0], lists[1], lists[2], lists[3]};
  xrt_buffer **out_lists[4] = {&res[0], &res[1], &res[2], &res[3]};
  xrt_event *done = NULL;
  if (!s) s = xrt_execute_multi(exe, arg_lists, ndev, 1, out_lists, 1, NULL,
                                &done);
  if (!s) s = xrt_event_await(done);
  for (int d = 0; !s && d < ndev; d++)
    s = xrt_buffer_to_host(res[d], out[d], (size_t)n_out * sizeof(float));
  if (s) tu_save_error();
  xrt_event_release(done);
  xrt_client_release(c);
  return s;
}

/* Compiles prog on a client of ndev devices for num_partitions nparts;
 * returns the status (message in tu_msg). */
static xrt_status compile_on(const char *prog, int ndev, int nparts) {
  xrt_client *c = tu_client(ndev, 0, 0);
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = "prog.mlir";
  co.num_partitions = nparts;
  xrt_executable *exe = NULL;
  tu_msg[0] = 0;
  xrt_status s = xrt_compile(c, prog, strlen(prog), &co, &exe);
  if (s) tu_save_error();
  xrt_client_release(c);
  return s;
}

/* Every annotation form, split shardings included: on one device they are
 * identities. */
static const char *const k_forms =
    "module @jit_f attributes {mhlo.num_partitions = 1 : i32, "
    "mhlo.num_replicas = 1 : i32, mhlo.frontend_attributes = {xla.sdy.meshes "
    "= \"{}\"}} {\n"
    "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=1]>\n"
    "  \"sdy.mesh\"() <{mesh = #sdy.mesh<[\"a\"=4]>, sym_name = \"mesh4\"}> : "
    "() -> ()\n"
    "  func.func public @main(%arg0: tensor<4x2xf32> {mhlo.sharding = "
    "\"{devices=[2,1]0,1}\", mhlo.layout_mode = \"default\"}, %arg1: "
    "tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>, "
    "sdy.unknown_attr = 3 : i64}) -> (tensor<4x2xf32> {jax.result_info = "
    "\"\", mhlo.sharding = \"{replicated}\"}, tensor<4x2xf32> "
    "{jax.result_info = \"[1]\", sdy.sharding = #sdy.sharding<@mesh4, "
    "[{\"a\"}, {}]>}) {\n"
    "    %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = \"\", "
    "mhlo.sharding = \"{devices=[2,1]<=[2]}\"} : (tensor<4x2xf32>) -> "
    "tensor<4x2xf32>\n"
    "    %1 = sdy.sharding_constraint %arg1 <@mesh, [{\"x\"}, {}]> : "
    "tensor<4x2xf32>\n"
    "    %2 = stablehlo.add %0, %1 {mhlo.sharding = \"{devices=[2,1]0,1 "
    "metadata={op_name=\\\"add\\\"}}\"} : tensor<4x2xf32>\n"
    "    %3 = \"sdy.sharding_constraint\"(%2) <{sharding = "
    "#sdy.sharding<@mesh, [{}, {\"y\"}]>}> : (tensor<4x2xf32>) -> "
    "tensor<4x2xf32>\n"
    "    %4 = sdy.reshard %3 <@mesh4, [{\"a\":(1)2}, {}]> : "
    "tensor<4x2xf32>\n"
    "    %5 = stablehlo.custom_call @Sharding(%4) {mhlo.sharding = "
    "\"{maximal device=0}\", sdy.future_attr = #sdy<whatever 1>} : "
    "(tensor<4x2xf32>) -> tensor<4x2xf32>\n"
    "    %6 = stablehlo.multiply %5, %arg1 : tensor<4x2xf32>\n"
    "    return %5, %6 : tensor<4x2xf32>, tensor<4x2xf32>\n"
    "  }\n"
    "}\n";

static void test_forms_on_one_device(void **state) {
  /* x = [0..7]: x + x = 2x, and 2x * x = 2x^2. */
  (void)state;
  float x[8];
  for (int i = 0; i < 8; i++) x[i] = (float)i;
  xrt_client *c = tu_client(1, 0, 0);
  tu_in in[2] = {{TU_SHAPE(XRT_F32, 4, 2), x}, {TU_SHAPE(XRT_F32, 4, 2), x}};
  tu_out o;
  TU_RUN_OK(c, k_forms, 2, in, &o);
  TU_ASSERT_OUT(&o, 0, float, 0, 2, 4, 6, 8, 10, 12, 14);
  TU_ASSERT_OUT(&o, 1, float, 0, 2, 8, 18, 32, 50, 72, 98);
  tu_out_free(&o);
  xrt_client_release(c);
}

/* Replicated and maximal shardings, sub-axes replicated by
 * last_tile_dim_replicate / replicated={...}, and axes of size 1 split
 * nothing: the program runs replicated on 2 devices. */
static void test_replicated_on_several_devices(void **state) {
  (void)state;
  static const char *const prog =
      "module attributes {mhlo.num_partitions = 2 : i32} {\n"
      "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=1]>\n"
      "  func.func @main(%a: tensor<4xf32> {mhlo.sharding = "
      "\"{replicated}\"}) -> (tensor<4xf32> {mhlo.sharding = \"{maximal "
      "device=1}\"}) {\n"
      "    %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "
      "\"{devices=[1,2]<=[2] last_tile_dim_replicate}\"} : (tensor<4xf32>) "
      "-> tensor<4xf32>\n"
      "    %1 = sdy.sharding_constraint %0 <@mesh, [{\"y\"}], "
      "replicated={\"x\"}> : tensor<4xf32>\n"
      "    %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "
      "\"{devices=[1,2]<=[2] last_tile_dims={manual}}\"} : (tensor<4xf32>) "
      "-> tensor<4xf32>\n"
      "    %3 = stablehlo.add %2, %2 {mhlo.sharding = \"{{replicated}}\"} : "
      "tensor<4xf32>\n"
      "    return %3 : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  const float x0[4] = {1, 2, 3, 4}, x1[4] = {10, 20, 30, 40};
  const float *in[2] = {x0, x1};
  float r0[4], r1[4], *out[2] = {r0, r1};
  xrt_status s = run_per_device(prog, 2, 2, in, 4, out, 4);
  if (s) fail_msg("%s", tu_msg);
  const float w0[4] = {2, 4, 6, 8}, w1[4] = {20, 40, 60, 80};
  assert_memory_equal(r0, w0, sizeof w0);
  assert_memory_equal(r1, w1, sizeof w1);
}

/* Split shardings on several devices need the partitioner: refused at the
 * first split value, located. */
static void test_split_refused(void **state) {
  (void)state;
  /* 1-based columns: "  func.func @main(" is 18 characters. */
  static const char *const arg =
      "module attributes {mhlo.num_partitions = 2 : i32} {\n"
      "  func.func @main(%a: tensor<4xf32> {mhlo.sharding = "
      "\"{devices=[2]0,1}\"}) -> tensor<4xf32> {\n"
      "    %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
      "    return %0 : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  assert_int_equal(compile_on(arg, 2, 2), XRT_UNIMPLEMENTED);
  TU_ASSERT_PREFIX(tu_msg, "prog.mlir:2:19: argument 0 of @main is split "
                           "across devices by its sharding "
                           "\"{devices=[2]0,1}\": automatic partitioning "
                           "(SPMD partitioning of a program written for the "
                           "global shape) is not supported");
  /* On one device the same program is fine. */
  assert_int_equal(compile_on(arg, 1, 1), XRT_OK);

  static const char *const sdy =
      "module attributes {mhlo.num_partitions = 2 : i32} {\n"
      "  sdy.mesh @mesh = <[\"x\"=2]>\n"
      "  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
      "    %1 = sdy.sharding_constraint %0 <@mesh, [{\"x\"}]> : "
      "tensor<4xf32>\n"
      "    %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "
      "\"{devices=[2]<=[2]}\"} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    return %2 : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  assert_int_equal(compile_on(sdy, 2, 2), XRT_UNIMPLEMENTED);
  TU_ASSERT_PREFIX(tu_msg, "prog.mlir:5:10: the result of "
                           "sdy.sharding_constraint is split across devices "
                           "by its sharding \"@mesh, [{\"x\"}]\": automatic "
                           "partitioning");

  static const char *const cc =
      "func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
      "  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "
      "\"{devices=[1,2,2]<=[4] last_tile_dim_replicate}\"} : "
      "(tensor<4x2xf32>) -> tensor<4x2xf32>\n"
      "  return %0 : tensor<4x2xf32>\n"
      "}\n";
  assert_int_equal(compile_on(cc, 4, 4), XRT_UNIMPLEMENTED);
  TU_ASSERT_PREFIX(tu_msg, "prog.mlir:2:8: the result of "
                           "stablehlo.custom_call @Sharding is split across "
                           "devices");

  /* An unknown mesh, an unknown sdy op: located errors. */
  static const char *const nomesh =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = sdy.sharding_constraint %a <@nope, [{\"x\"}]> : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n";
  assert_int_equal(compile_on(nomesh, 1, 1), XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "prog.mlir:2:8: the sharding \"@nope, "
                           "[{\"x\"}]\" names a mesh the module does not "
                           "define");
  static const char *const unknown =
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = sdy.propagation_barrier %a : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n";
  assert_int_equal(compile_on(unknown, 1, 1), XRT_UNIMPLEMENTED);
  TU_ASSERT_PREFIX(tu_msg, "prog.mlir:2:8: unknown op "
                           "'sdy.propagation_barrier'");
}

/* The GSPMD form of shard_map(f, mesh, in_specs=P('x'),
 * out_specs=P('x')) on a 1-D mesh of n devices, for global x of 4n
 * elements, with f(x) = psum(x) + x * (axis_index + 1). */
static void gspmd_prog(char *buf, size_t cap, int n) {
  char groups[64] = "";
  for (int i = 0; i < n; i++)
    snprintf(groups + strlen(groups), sizeof groups - strlen(groups), "%s%d",
             i ? ", " : "", i);
  snprintf(buf, cap,
      "module @jit_f attributes {mhlo.num_partitions = %d : i32, "
      "mhlo.num_replicas = 1 : i32} {\n"
      "  func.func public @main(%%arg0: tensor<%dxf32> {mhlo.sharding = "
      "\"{devices=[%d]<=[%d]}\"}) -> (tensor<%dxf32> {jax.result_info = \"\", "
      "mhlo.sharding = \"{devices=[%d]<=[%d]}\"}) {\n"
      "    %%0 = stablehlo.custom_call @Sharding(%%arg0) {backend_config = "
      "\"\", mhlo.sharding = \"{devices=[%d]<=[%d]}\"} : (tensor<%dxf32>) -> "
      "tensor<%dxf32>\n"
      "    %%1 = stablehlo.custom_call @SPMDFullToShardShape(%%0) "
      "{backend_config = \"\", mhlo.sharding = \"{manual}\"} : "
      "(tensor<%dxf32>) -> tensor<4xf32>\n"
      "    %%2 = call @shmap_body(%%1) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    %%3 = stablehlo.custom_call @Sharding(%%2) {backend_config = \"\", "
      "mhlo.sharding = \"{manual}\"} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    %%4 = stablehlo.custom_call @SPMDShardToFullShape(%%3) "
      "{backend_config = \"\", mhlo.sharding = \"{devices=[%d]<=[%d]}\"} : "
      "(tensor<4xf32>) -> tensor<%dxf32>\n"
      "    return %%4 : tensor<%dxf32>\n"
      "  }\n"
      "  func.func private @shmap_body(%%arg0: tensor<4xf32>) -> "
      "(tensor<4xf32> {jax.result_info = \"[('x',)]\"}) {\n"
      "    %%0 = \"stablehlo.all_reduce\"(%%arg0) <{channel_handle = "
      "#stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = "
      "dense<[[%s]]> : tensor<1x%dxi64>, use_global_device_ids}> ({\n"
      "    ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
      "      %%s = stablehlo.add %%a, %%b : tensor<f32>\n"
      "      stablehlo.return %%s : tensor<f32>\n"
      "    }) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    %%p = stablehlo.partition_id : tensor<ui32>\n"
      "    %%q = stablehlo.convert %%p : (tensor<ui32>) -> tensor<f32>\n"
      "    %%one = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "    %%k = stablehlo.add %%q, %%one : tensor<f32>\n"
      "    %%kb = stablehlo.broadcast_in_dim %%k, dims = [] : (tensor<f32>) "
      "-> tensor<4xf32>\n"
      "    %%m = stablehlo.multiply %%arg0, %%kb : tensor<4xf32>\n"
      "    %%r = stablehlo.add %%0, %%m : tensor<4xf32>\n"
      "    return %%r : tensor<4xf32>\n"
      "  }\n"
      "}\n",
      n, 4 * n, n, n, 4 * n, n, n, n, n, 4 * n, 4 * n, 4 * n, n, n, 4 * n,
      4 * n, groups, n);
}

/* The Shardy form of the same shard_map (sdy.manual_computation). */
static void sdy_prog(char *buf, size_t cap, int n) {
  char groups[64] = "";
  for (int i = 0; i < n; i++)
    snprintf(groups + strlen(groups), sizeof groups - strlen(groups), "%s%d",
             i ? ", " : "", i);
  snprintf(buf, cap,
      "module @jit_f attributes {mhlo.num_partitions = %d : i32, "
      "mhlo.num_replicas = 1 : i32} {\n"
      "  sdy.mesh @mesh = <[\"x\"=%d]>\n"
      "  func.func public @main(%%arg0: tensor<%dxf32> {sdy.sharding = "
      "#sdy.sharding<@mesh, [{\"x\"}]>}) -> (tensor<%dxf32> "
      "{jax.result_info = \"\", sdy.sharding = #sdy.sharding<@mesh, "
      "[{\"x\"}]>}) {\n"
      "    %%0 = sdy.manual_computation(%%arg0) in_shardings=[<@mesh, "
      "[{\"x\"}]>] out_shardings=[<@mesh, [{\"x\"}]>] manual_axes={\"x\"} "
      "(%%arg1: tensor<4xf32>) {\n"
      "      %%1 = \"stablehlo.all_reduce\"(%%arg1) <{channel_handle = "
      "#stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = "
      "dense<[[%s]]> : tensor<1x%dxi64>, use_global_device_ids}> ({\n"
      "      ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
      "        %%s = stablehlo.add %%a, %%b : tensor<f32>\n"
      "        stablehlo.return %%s : tensor<f32>\n"
      "      }) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "      %%p = stablehlo.partition_id : tensor<ui32>\n"
      "      %%q = stablehlo.convert %%p : (tensor<ui32>) -> tensor<f32>\n"
      "      %%one = stablehlo.constant dense<1.0> : tensor<f32>\n"
      "      %%k = stablehlo.add %%q, %%one : tensor<f32>\n"
      "      %%kb = stablehlo.broadcast_in_dim %%k, dims = [] : "
      "(tensor<f32>) -> tensor<4xf32>\n"
      "      %%m = stablehlo.multiply %%arg1, %%kb : tensor<4xf32>\n"
      "      %%r = stablehlo.add %%1, %%m : tensor<4xf32>\n"
      "      sdy.return %%r : tensor<4xf32>\n"
      "    } : (tensor<%dxf32>) -> tensor<%dxf32>\n"
      "    return %%0 : tensor<%dxf32>\n"
      "  }\n"
      "}\n",
      n, n, 4 * n, 4 * n, groups, n, 4 * n, 4 * n, 4 * n);
}

/* Device d holds x[4d .. 4d+4) of x = [0, 1, ..., 4n-1]:
 *   psum(x)[i] = sum over d of (4d + i) = 2n(n-1) + n*i
 *   f(x)_d[i] = psum(x)[i] + (4d + i) * (d + 1).
 * n = 2: psum = [4, 6, 8, 10]; device 0: [4, 7, 10, 13]; device 1:
 * [4+8, 6+10, 8+12, 10+14] = [12, 16, 20, 24].
 * n = 4: psum = [24, 28, 32, 36]; device 3: [24+48, 28+52, 32+56, 36+60]
 * = [72, 80, 88, 96]. */
static void check_shard_map(void (*make)(char *, size_t, int), int n) {
  char prog[8192];
  make(prog, sizeof prog, n);
  float x[4][4], r[4][4];
  const float *in[4] = {0};
  float *out[4] = {0};
  for (int d = 0; d < n; d++) {
    for (int i = 0; i < 4; i++) x[d][i] = (float)(4 * d + i);
    in[d] = x[d];
    out[d] = r[d];
  }
  xrt_status s = run_per_device(prog, n, n, in, 4, out, 4);
  if (s) fail_msg("n=%d: %s", n, tu_msg);
  for (int d = 0; d < n; d++)
    for (int i = 0; i < 4; i++) {
      float want = (float)(2 * n * (n - 1) + n * i + (4 * d + i) * (d + 1));
      if (r[d][i] != want)
        fail_msg("n=%d device %d element %d: got %g want %g", n, d, i,
                 (double)r[d][i], (double)want);
    }
  if (n == 2) {
    const float w1[4] = {12, 16, 20, 24};
    assert_memory_equal(r[1], w1, sizeof w1);
  } else {
    const float w3[4] = {72, 80, 88, 96};
    assert_memory_equal(r[3], w3, sizeof w3);
  }
}

static void test_shard_map_gspmd(void **state) {
  (void)state;
  check_shard_map(gspmd_prog, 2);
  check_shard_map(gspmd_prog, 4);
}

static void test_shard_map_sdy(void **state) {
  (void)state;
  check_shard_map(sdy_prog, 2);
  check_shard_map(sdy_prog, 4);
}

/* A shard_map needs its partitions; its pieces cannot be used as whole
 * values, nor can a computed value be cut into pieces. */
static void test_shard_map_refusals(void **state) {
  (void)state;
  char prog[8192];
  sdy_prog(prog, sizeof prog, 2);
  assert_int_equal(compile_on(prog, 2, 1), XRT_INVALID_ARGUMENT);
  TU_ASSERT_PREFIX(tu_msg, "prog.mlir:4:10: the program's shard_map runs on "
                           "2 devices, but it is compiled for 1 partitions");

  static const char *const computed =
      "module attributes {mhlo.num_partitions = 2 : i32} {\n"
      "  sdy.mesh @mesh = <[\"x\"=2]>\n"
      "  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    %0 = stablehlo.add %a, %a : tensor<8xf32>\n"
      "    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{\"x\"}]>] "
      "out_shardings=[<@mesh, [{\"x\"}]>] manual_axes={\"x\"} (%b: "
      "tensor<4xf32>) {\n"
      "      sdy.return %b : tensor<4xf32>\n"
      "    } : (tensor<8xf32>) -> tensor<8xf32>\n"
      "    return %1 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  assert_int_equal(compile_on(computed, 2, 2), XRT_UNIMPLEMENTED);
  TU_ASSERT_PREFIX(tu_msg, "prog.mlir:5:10: the result of stablehlo.add "
                           "enters sdy.manual_computation with the global "
                           "type tensor<8xf32>, but each device takes a "
                           "tensor<4xf32> piece: automatic partitioning");

  static const char *const used =
      "module attributes {mhlo.num_partitions = 2 : i32} {\n"
      "  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
      "    %0 = stablehlo.custom_call @SPMDFullToShardShape(%a) "
      "{mhlo.sharding = \"{manual}\"} : (tensor<8xf32>) -> tensor<4xf32>\n"
      "    %1 = stablehlo.custom_call @SPMDShardToFullShape(%0) "
      "{mhlo.sharding = \"{devices=[2]<=[2]}\"} : (tensor<4xf32>) -> "
      "tensor<8xf32>\n"
      "    %2 = stablehlo.add %1, %1 : tensor<8xf32>\n"
      "    return %2 : tensor<8xf32>\n"
      "  }\n"
      "}\n";
  assert_int_equal(compile_on(used, 2, 2), XRT_UNIMPLEMENTED);
  TU_ASSERT_PREFIX(tu_msg, "prog.mlir:5:10: argument 0 of @main holds one "
                           "device's piece (tensor<4xf32>) of a shard_map, "
                           "but stablehlo.add uses it as the whole value "
                           "(tensor<8xf32>): automatic partitioning");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forms_on_one_device),
      cmocka_unit_test(test_replicated_on_several_devices),
      cmocka_unit_test(test_split_refused),
      cmocka_unit_test(test_shard_map_gspmd),
      cmocka_unit_test(test_shard_map_sdy),
      cmocka_unit_test(test_shard_map_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
