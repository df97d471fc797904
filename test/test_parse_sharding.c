/* test_parse_sharding.c - the sharding-annotation reader and the Shardy
 * parser (src/core/sharding_annot.c, parse_sdy.c) on the forms
 * test_sharding_annotations.c does not write: sdy shardings with an inline
 * mesh (mesh<[...]> and #sdy.mesh<[...]>), axis priorities (p0, p1), open
 * dimensions (?), sub-axes, and malformed or dangling ones (an axis or
 * mesh the module lacks, missing quotes, commas, brackets); mhlo.sharding
 * strings with bad tile lists, too many dimensions, deep nesting,
 * whitespace, nested metadata and last_tile_dims; sdy.mesh in its older
 * and generic forms (device_ids, no sym_name, 17 axes, an axis of size 0);
 * sdy.manual_computation bodies of the wrong arity or shard type, sdy.return
 * outside one, two shard_map regions on different device counts; a mesh
 * named by a quoted symbol (@"my mesh"), which the reader used to report
 * as undefined.  Each bad one must fail at its op or argument with its
 * status and message; each good one must compile on 2 devices, and a
 * split one must be refused as split. */
#include "test_util.h"

/* 2-partition modules: an argument carrying the sharding shd (MH, SD), a
 * shard_map written with sdy.manual_computation (MC). */
#define MH(shd)                                                       \
  "module attributes {mhlo.num_partitions = 2 : i32} {\n  func.func " \
  "@main(%a: tensor<4x2xf32> {mhlo.sharding = \"" shd                 \
  "\"}) -> tensor<4x2xf32> {\n    return %a : tensor<4x2xf32>\n  }\n}\n"
#define SD(shd)                                                                \
  "module attributes {mhlo.num_partitions = 2 : i32} {\n  sdy.mesh @mesh = "   \
  "<[\"x\"=2, \"y\"=1]>\n  func.func @main(%a: tensor<4x2xf32> {sdy.sharding " \
  "= #sdy.sharding<" shd                                                       \
  ">}) -> tensor<4x2xf32> {\n    return %a : tensor<4x2xf32>\n  }\n}\n"
#define MC(mesh, arg, body, ret)                                         \
  "module attributes {mhlo.num_partitions = 2 : i32} {\n  " mesh         \
  "\n  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n    %1 = " \
  "sdy.manual_computation(%a) in_shardings=[<@mesh, [{\"x\"}]>] "        \
  "out_shardings=[<@mesh, [{\"x\"}]>] manual_axes={\"x\"} (" arg         \
  ") {\n      " body                                                     \
  "\n    } : (tensor<8xf32>) -> tensor<8xf32>\n    return " ret          \
  " : tensor<8xf32>\n  }\n}\n"
#define M2 "sdy.mesh @mesh = <[\"x\"=2]>"

/* Compiles prog on c (2 devices) as 2 partitions; the message in tu_msg. */
static xrt_status compile2(xrt_client *c, const char *prog) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = "prog.mlir";
  co.num_partitions = 2;
  xrt_executable *exe = NULL;
  tu_msg[0] = 0;
  xrt_status s = xrt_compile(c, prog, strlen(prog), &co, &exe);
  if (s) tu_save_error();
  xrt_executable_release(exe);
  return s;
}

typedef struct bad_shd {
  const char *text;
  xrt_status code;
  const char *where, *sub;
} bad_shd;

static void check(const bad_shd *bad, size_t nbad, const char *const *ok,
                  size_t nok) {
  xrt_client *c = tu_client(2, 0, 0);
  for (size_t i = 0; i < nbad; i++) {
    xrt_status s = compile2(c, bad[i].text);
    if (s != bad[i].code)
      fail_msg("case %zu: status %s, want %s (%s)", i, xrt_strerror(s),
               xrt_strerror(bad[i].code), tu_msg);
    TU_ASSERT_PREFIX(tu_msg, bad[i].where);
    TU_ASSERT_CONTAINS(tu_msg, bad[i].sub);
  }
  for (size_t i = 0; i < nok; i++)
    if (compile2(c, ok[i]) != XRT_OK) fail_msg("ok case %zu: %s", i, tu_msg);
  xrt_client_release(c);
}

static const bad_shd annotations_bad[] = {
    {SD("mesh<[\"x\"=2]>, [{\"x\"}, {}]"), XRT_UNIMPLEMENTED, "prog.mlir:3:19:",
     "argument 0 of @main is split across devices by its sharding "
     "\"mesh<[\"x\"=2]>, [{\"x\"}, {}]\""},
    {SD("mesh<[\"x\"=2]>, [{\"z\"}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:",
     "the sharding \"mesh<[\"x\"=2]>, [{\"z\"}, {}]\" names an axis the mesh "
     "lacks"},
    {SD("mesh<[\"x\"2]>, [{}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:", "malformed sharding \"mesh<[\"x\"2]>, [{}, {}]\""},
    {SD("mesh<[\"x\"=2>, [{}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:80:", "unbalanced '>'"},
    {SD("mesh<\"x\"=2>, [{}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:", "malformed sharding \"mesh<\"x\"=2>, [{}, {}]\""},
    {SD("foo, [{}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:", "malformed sharding \"foo, [{}, {}]\""},
    {SD("@mesh, [{\"q\"}, {}]"), XRT_INVALID_ARGUMENT, "prog.mlir:3:19:",
     "the sharding \"@mesh, [{\"q\"}, {}]\" names an axis the mesh lacks"},
    {SD("@mesh, [{\"x\":(1}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:84:", "unbalanced '}'"},
    {SD("@mesh, [{\"y\"}px, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:", "malformed sharding \"@mesh, [{\"y\"}px, {}]\""},
    {SD("@mesh, [{y}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:", "malformed sharding \"@mesh, [{y}, {}]\""},
    {SD("@mesh, [{\"y}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:78:", "unterminated string"},
    {SD("@mesh [{}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:", "malformed sharding \"@mesh [{}, {}]\""},
    {SD("@nomesh, [{}, {}]"), XRT_INVALID_ARGUMENT, "prog.mlir:3:19:",
     "the sharding \"@nomesh, [{}, {}]\" names a mesh the module does not "
     "define (sdy.mesh)"},
    {MH("{devices=[2,1]0,1}"), XRT_UNIMPLEMENTED, "prog.mlir:2:19:",
     "argument 0 of @main is split across devices by its sharding "
     "\"{devices=[2,1]0,1}\""},
    {MH("{devices=[a]0}"), XRT_INVALID_ARGUMENT,
     "prog.mlir:2:19:", "malformed sharding \"{devices=[a]0}\""},
    {MH("{devices=[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]0}"),
     XRT_INVALID_ARGUMENT, "prog.mlir:2:19:",
     "malformed sharding \"{devices=[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]0}\""},
    {MH("{replicated"), XRT_INVALID_ARGUMENT,
     "prog.mlir:2:19:", "malformed sharding \"{replicated\""},
    {MH("{bogus}"), XRT_INVALID_ARGUMENT,
     "prog.mlir:2:19:", "malformed sharding \"{bogus}\""},
    {MH("{{{{{{{{{{replicated}}}}}}}}}}"), XRT_INVALID_ARGUMENT,
     "prog.mlir:2:19:",
     "malformed sharding \"{{{{{{{{{{replicated}}}}}}}}}}\""},
    {MH("{devices=[99999999999999999999,1]0,1}"), XRT_INVALID_ARGUMENT,
     "prog.mlir:2:19:",
     "malformed sharding \"{devices=[99999999999999999999,1]0,1}\""},
    {MH("{devices=[1,1]0 metadata={op_name=\\\"abc}"), XRT_INVALID_ARGUMENT,
     "prog.mlir:2:19:",
     "malformed sharding \"{devices=[1,1]0 metadata={op_name=\"abc}\""},
    {MH("{devices=[1,1]0,"), XRT_INVALID_ARGUMENT,
     "prog.mlir:2:19:", "malformed sharding \"{devices=[1,1]0,\""},
    {SD("@mesh, [{\"x\":(1)}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:", "malformed sharding \"@mesh, [{\"x\":(1)}, {}]\""},
    {SD("@mesh, [{\"x\":(a)2}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:", "malformed sharding \"@mesh, [{\"x\":(a)2}, {}]\""},
    {SD("mesh<[\"a\"=1, \"b\"=1, \"c\"=1, \"d\"=1, \"e\"=1, \"f\"=1, \"g\"=1, "
        "\"h\"=1, \"i\"=1, \"j\"=1, \"k\"=1, \"l\"=1, \"m\"=1, \"n\"=1, "
        "\"o\"=1, \"p\"=1, \"q\"=1]>, [{}, {}]"),
     XRT_INVALID_ARGUMENT, "prog.mlir:3:19:",
     "malformed sharding \"mesh<[\"a\"=1, \"b\"=1, \"c\"=1, \"d\"=1, \"e\"=1, "
     "\"f\"=1, \"g\"=1, \"h\"=1, \"i\"=1, \"j\"=1, \"k\"=1, \"l\"=1, \"m\"=1, "
     "\"n\"=1, \"o\"=1, \"p\"=1, \"q\"=1]>, [{}, {}]\""},
    {SD("mesh<[\"x\"=a]>, [{}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:19:", "malformed sharding \"mesh<[\"x\"=a]>, [{}, {}]\""},
    {SD("mesh<[\"x]>, [{}, {}]"), XRT_INVALID_ARGUMENT,
     "prog.mlir:3:75:", "unterminated string"},
    {SD("@mesh, [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, "
        "{}, {}]"),
     XRT_INVALID_ARGUMENT, "prog.mlir:3:19:",
     "malformed sharding \"@mesh, [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, "
     "{}, {}, {}, {}, {}, {}]\""},
    {"module attributes {mhlo.num_partitions = 2 : i32} {\n  func.func "
     "@main(%a: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = "
     "stablehlo.custom_call @Sharding(%a, %a) {mhlo.sharding = "
     "\"{replicated}\"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n    "
     "return %0 : tensor<4xf32>\n  }\n}\n",
     XRT_INVALID_ARGUMENT, "prog.mlir:3:10:",
     "stablehlo.custom_call @Sharding has 2 operands and 1 results; a sharding "
     "annotation passes its operands through"},
};

static const char *const annotations_ok[] = {
    SD("mesh<[\"x\"=1, \"y\"=1]>, [{\"x\"}, {\"y\"}]"),
    SD("#sdy.mesh<[\"x\"=2]>, [{}, {}]"),
    SD("@mesh, [{\"y\"}p1, {}p0]"),
    SD("@mesh, [{\"y\", ?}, {?}]"),
    MH("{devices=[1,1]0}"),
    MH("{devices=[1,1]<=[1]}"),
    MH("{devices=[1,1]<=[1] T(0)}"),
    MH("{replicated, maximal device=0}"),
    MH("{\n\treplicated }"),
    MH("{devices=[1,2]0,1 last_tile_dims={manual, replicated}}"),
    MH("{devices=[1,1]0 metadata={op_name=\\\"a}b\\\" x=[1]}}"),
    MH("{maximal device=x}"),
    MH("{manual}"),
    MH("{unknown}"),
    MH("{devices=[1,1,2]<=[2] last_tile_dims={manual, replicated}}"),
    MH("{devices=[1,1]0 last_tile_dims={manual, replicated}}"),
};

static void test_annotations(void **state) {
  (void)state;
  check(annotations_bad, TU_COUNT(annotations_bad), annotations_ok,
        TU_COUNT(annotations_ok));
}

static const bad_shd shardy_bad[] = {
    {MC(M2, "%b: tensor<4xf32>", "sdy.return %b : tensor<4xf32>, tensor<4xf32>",
        "%1"),
     XRT_INVALID_ARGUMENT,
     "prog.mlir:5:7:", "sdy.return lists 2 types for 1 operands"},
    {MC(M2, "%b: tensor<3xf32>", "sdy.return %b : tensor<3xf32>", "%1"),
     XRT_INVALID_ARGUMENT, "prog.mlir:4:10:",
     "sdy.manual_computation: the shard type tensor<3xf32> does not divide "
     "tensor<8xf32> of argument 0 of @main"},
    {MC(M2, "%b: tensor<4xf32>, %c: tensor<4xf32>",
        "sdy.return %b : tensor<4xf32>", "%1"),
     XRT_INVALID_ARGUMENT, "prog.mlir:4:10:",
     "sdy.manual_computation needs a body with an argument per operand that "
     "ends in sdy.return of a value per result"},
    {MC(M2, "%b: tensor<4xf32>",
        "sdy.return %b, %b : tensor<4xf32>, tensor<4xf32>", "%1"),
     XRT_INVALID_ARGUMENT, "prog.mlir:4:10:",
     "sdy.manual_computation needs a body with an argument per operand that "
     "ends in sdy.return of a value per result"},
    {MC("sdy.mesh @mesh = <[\"x\"=0]>", "%b: tensor<4xf32>",
        "sdy.return %b : tensor<4xf32>", "%1"),
     XRT_INVALID_ARGUMENT,
     "prog.mlir:2:26:", "mesh axis size 0 must be positive"},
    {MC("sdy.mesh @mesh = <[\"a\"=1, \"b\"=1, \"c\"=1, \"d\"=1, \"e\"=1, "
        "\"f\"=1, \"g\"=1, \"h\"=1, \"i\"=1, \"j\"=1, \"k\"=1, \"l\"=1, "
        "\"m\"=1, \"n\"=1, \"o\"=1, \"p\"=1, \"x\"=2]>",
        "%b: tensor<4xf32>", "sdy.return %b : tensor<4xf32>", "%1"),
     XRT_UNIMPLEMENTED, "prog.mlir:2:134:", "a mesh of more than 16 axes"},
    {MC("\"sdy.mesh\"() <{mesh = #sdy.mesh<[\"x\"=2]>}> : () -> ()",
        "%b: tensor<4xf32>", "sdy.return %b : tensor<4xf32>", "%1"),
     XRT_INVALID_ARGUMENT,
     "prog.mlir:2:4:", "sdy.mesh needs a mesh and a sym_name"},
    {"module attributes {mhlo.num_partitions = 2 : i32} {\n  func.func "
     "@main(%a: tensor<8xf32>) -> tensor<8xf32> {\n    sdy.return %a : "
     "tensor<8xf32>\n  }\n}\n",
     XRT_INVALID_ARGUMENT,
     "prog.mlir:3:5:", "sdy.return outside sdy.manual_computation"},
    {"module attributes {mhlo.num_partitions = 2 : i32} {\n  sdy.mesh @mesh = "
     "<[\"x\"=2]>\n  sdy.mesh @mesh4 = <[\"y\"=4]>\n  func.func @main(%a: "
     "tensor<8xf32>) -> tensor<8xf32> {\n    %1 = sdy.manual_computation(%a) "
     "in_shardings=[<@mesh, [{\"x\"}]>] out_shardings=[<@mesh, [{\"x\"}]>] "
     "manual_axes={\"x\"} (%b: tensor<4xf32>) {\n      sdy.return %b : "
     "tensor<4xf32>\n    } : (tensor<8xf32>) -> tensor<8xf32>\n    %2 = "
     "sdy.manual_computation(%1) in_shardings=[<@mesh4, [{\"y\"}]>] "
     "out_shardings=[<@mesh4, [{\"y\"}]>] manual_axes={\"y\"} (%c: "
     "tensor<2xf32>) {\n      sdy.return %c : tensor<2xf32>\n    } : "
     "(tensor<8xf32>) -> tensor<8xf32>\n    return %2 : tensor<8xf32>\n  "
     "}\n}\n",
     XRT_UNIMPLEMENTED, "prog.mlir:8:10:",
     "sdy.manual_computation runs on 4 devices but an earlier shard_map region "
     "on 2"},
    {"module attributes {mhlo.num_partitions = 2 : i32} {\n  func.func "
     "@main(%a: tensor<8xf32>) -> tensor<8xf32> {\n    %0 = "
     "stablehlo.custom_call @SPMDFullToShardShape(%a) {mhlo.sharding = "
     "\"{manual}\"} : (tensor<8xf32>) -> tensor<3xf32>\n    %1 = "
     "stablehlo.custom_call @SPMDShardToFullShape(%0) {mhlo.sharding = "
     "\"{devices=[2]<=[2]}\"} : (tensor<3xf32>) -> tensor<8xf32>\n    return "
     "%1 : tensor<8xf32>\n  }\n}\n",
     XRT_INVALID_ARGUMENT, "prog.mlir:3:10:",
     "stablehlo.custom_call @SPMDFullToShardShape: the shard type "
     "tensor<3xf32> does not divide tensor<8xf32> of argument 0 of @main"},
    {"module attributes {mhlo.num_partitions = 2 : i32} {\n  \"sdy.mesh\"() "
     "<{sym_name = 3 : i64, mesh = #sdy.mesh<[\"x\"=2]>}> : () -> ()\n  "
     "func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n    return %a : "
     "tensor<8xf32>\n  }\n}\n",
     XRT_INVALID_ARGUMENT,
     "prog.mlir:2:4:", "sdy.mesh needs a mesh and a sym_name"},
    {"module attributes {mhlo.num_partitions = 2 : i32} {\n  \"sdy.mesh\"() "
     "<{sym_name = \"m\", mesh = <[\"x\"=2]>}> : () -> ()\n  func.func "
     "@main(%a: tensor<8xf32>) -> tensor<8xf32> {\n    return %a : "
     "tensor<8xf32>\n  }\n}\n",
     XRT_INVALID_ARGUMENT,
     "prog.mlir:2:41:", "expected #sdy.mesh<...>, found '<'"},
    {"module attributes {mhlo.num_partitions = 2 : i32} {\n  sdy.mesh @\"my "
     "mesh\" = <[\"x\"=2]>\n  func.func @main(%a: tensor<8xf32> {sdy.sharding "
     "= #sdy.sharding<@\"my mesh\", [{\"x\"}]>, mhlo.other = 3 : i64}) -> "
     "tensor<8xf32> {\n    return %a : tensor<8xf32>\n  }\n}\n",
     XRT_UNIMPLEMENTED, "prog.mlir:3:19:",
     "argument 0 of @main is split across devices by its sharding \"@\"my "
     "mesh\", [{\"x\"}]\""},
};

static const char *const shardy_ok[] = {
    MC(M2, "%b: tensor<4xf32>", "sdy.return %b : tensor<4xf32>", "%1"),
    MC("sdy.mesh @mesh = <\"x\"=2>", "%b: tensor<4xf32>",
       "sdy.return %b : tensor<4xf32>", "%1"),
    MC("\"sdy.mesh\"() <{sym_name = \"mesh\", mesh = #sdy.mesh<[\"x\"=2], "
       "device_ids=[1, 0]>}> : () -> ()",
       "%b: tensor<4xf32>", "sdy.return %b : tensor<4xf32>", "%1"),
    "module attributes {mhlo.num_partitions = 2 : i32} {\n  func.func "
    "@main(%a: tensor<8xf32>) -> tensor<8xf32> {\n    %0:2 = "
    "stablehlo.custom_call @SPMDFullToShardShape(%a, %a) {mhlo.sharding = "
    "\"{manual}\"} : (tensor<8xf32>, tensor<8xf32>) -> (tensor<4xf32>, "
    "tensor<4xf32>)\n    %1 = stablehlo.custom_call "
    "@SPMDShardToFullShape(%0#0) {mhlo.sharding = \"{devices=[2]<=[2]}\"} : "
    "(tensor<4xf32>) -> tensor<8xf32>\n    return %1 : tensor<8xf32>\n  }\n}\n",
    "module attributes {mhlo.num_partitions = 2 : i32} {\n  sdy.mesh @\"my "
    "mesh\" = <[\"x\"=2]>\n  func.func @main(%a: tensor<8xf32> {sdy.sharding = "
    "#sdy.sharding<@\"my mesh\", [{}]>, mhlo.other = 3 : i64}) -> "
    "tensor<8xf32> {\n    return %a : tensor<8xf32>\n  }\n}\n",
    "module attributes {mhlo.num_partitions = 2 : i32} {\n  " M2
    "\n  func.func @main(%a: tensor<8xf32> {mhlo.sharding = 3 : i64}) -> "
    "tensor<8xf32> {\n    %1 = sdy.manual_computation() in_shardings=[] "
    "out_shardings=[<@mesh, [{\"x\"}]>] manual_axes={\"x\"} () {\n      %c = "
    "stablehlo.constant dense<1.0> : tensor<4xf32>\n      sdy.return %c : "
    "tensor<4xf32>\n    } : () -> tensor<8xf32>\n    return %1 : "
    "tensor<8xf32>\n  }\n}\n",
    "module attributes {mhlo.num_partitions = 2 : i32} {\n  " M2
    "\n  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n    "
    "sdy.manual_computation(%a) in_shardings=[<@mesh, [{\"x\"}]>] "
    "out_shardings=[] manual_axes={\"x\"} (%b: tensor<4xf32>) {\n      "
    "sdy.return\n    } : (tensor<8xf32>) -> ()\n    return %a : "
    "tensor<8xf32>\n  }\n}\n",
    "module attributes {mhlo.num_partitions = 2 : i32} {\n  \"sdy.mesh\"() "
    "<{sym_name = \"m\", mesh = #sdy.mesh<[\"x\"=2]>}> : () -> ()\n  func.func "
    "@main(%a: tensor<8xf32>) -> tensor<8xf32> {\n    return %a : "
    "tensor<8xf32>\n  }\n}\n",
};

static void test_shardy(void **state) {
  (void)state;
  check(shardy_bad, TU_COUNT(shardy_bad), shardy_ok, TU_COUNT(shardy_ok));
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_annotations),
        cmocka_unit_test(test_shardy))
