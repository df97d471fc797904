/*
 * test_bytecode_alloc_fail.c - allocation failures while a portable
 * artifact is read and its shape-polymorphic program refined
 * (src/core/bytecode.c, bytecode_vhlo.c, refine*.c), as test_alloc_fail.c
 * does for the runtime: a client's counting allocator fails its Nth
 * allocation, N = 1, 2, ..., while xrt_compile reads an artifact (written
 * here by xrt_program_serialize from a dynamic program with a private
 * function, folds and a dynamic op; and from one with a dimension
 * argument, whose value refinement searches for) for concrete argument
 * shapes.  Each compile must succeed or fail with XRT_RESOURCE_EXHAUSTED,
 * and leave no block allocated; the walk ends when a compile no longer reaches N, and
 * that executable gives the shapes the program should have.  Run once
 * failing only the Nth allocation and once (persistent) every one after.
 */
#include "test_util.h"

static const char *kDynamic =
    "func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
    "  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
    "  %d64 = stablehlo.convert %d : (tensor<i32>) -> tensor<i64>\n"
    "  %r = func.call @inner(%d64, %x) : (tensor<i64>, tensor<?x4xf32>) -> tensor<?x4xf32>\n"
    "  return %r : tensor<?x4xf32>\n"
    "}\n"
    "func.func private @inner(%b: tensor<i64>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
    "  %b32 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>\n"
    "  %b1 = stablehlo.reshape %b32 : (tensor<i32>) -> tensor<1xi32>\n"
    "  %c4 = stablehlo.constant dense<4> : tensor<1xi32>\n"
    "  %s = stablehlo.concatenate %b1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
    "  %i = stablehlo.dynamic_iota %s, dim = 0 : (tensor<2xi32>) -> tensor<?x4xf32>\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<f32>\n"
    "  %o = stablehlo.dynamic_broadcast_in_dim %one, %s, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>\n"
    "  %a = stablehlo.add %x, %i : tensor<?x4xf32>\n"
    "  %r = stablehlo.add %a, %o : tensor<?x4xf32>\n"
    "  return %r : tensor<?x4xf32>\n"
    "}\n";

/* jax.export's dimension arguments: b's value is found by search. */
static const char *kDimArg =
    "func.func @main(%b: tensor<i64>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
    "  %s1 = stablehlo.reshape %b : (tensor<i64>) -> tensor<1xi64>\n"
    "  %c4 = stablehlo.constant dense<4> : tensor<1xi64>\n"
    "  %s = stablehlo.concatenate %s1, %c4, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>\n"
    "  %o = stablehlo.constant dense<1.0> : tensor<f32>\n"
    "  %y = stablehlo.dynamic_broadcast_in_dim %o, %s, dims = [] : (tensor<f32>, tensor<2xi64>) -> tensor<?x4xf32>\n"
    "  %r = stablehlo.add %x, %y : tensor<?x4xf32>\n"
    "  return %r : tensor<?x4xf32>\n}\n";

static int g_nargs; /* arguments of the artifact being compiled */

/* Compiles the artifact with fail_at n (0: none, and the client may keep
 * what it allocated); true when nothing failed. */
static bool attempt(xrt_client *c, tu_counting_alloc *a, const char *bytes,
                    size_t len, long n, bool persistent) {
  xrt_shape in[2] = {TU_SHAPE(XRT_F32, 3, 4), TU_SHAPE(XRT_F32, 3, 4)};
  if (g_nargs == 2) in[0] = TU_SCALAR(XRT_S64);
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.filename = "a.mlir.bc";
  o.num_arg_shapes = g_nargs;
  o.arg_shapes = in;
  o.cache_disable = 1;
  long live = atomic_load(&a->live);
  atomic_store(&a->calls, 0);
  atomic_store(&a->failed, false);
  a->persistent = persistent;
  a->fail_at = n;
  xrt_executable *exe = NULL;
  xrt_status s = xrt_compile(c, bytes, len, &o, &exe);
  a->fail_at = 0;
  a->persistent = false;
  bool failed = atomic_load(&a->failed);
  if (s == XRT_OK) {
    assert_non_null(exe);
    xrt_shape out;
    assert_int_equal(xrt_executable_output_shape(exe, 0, &out), XRT_OK);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.dims[0], 3);
    assert_int_equal(out.dims[1], 4);
    xrt_executable_release(exe);
  } else {
    if (s != XRT_RESOURCE_EXHAUSTED)
      fail_msg("N=%ld%s: status %d: %s", n, persistent ? " (persistent)" : "",
               (int)s, xrt_last_error());
    assert_true(failed);
    assert_null(exe);
  }
  if (n && atomic_load(&a->live) != live)
    fail_msg("N=%ld%s: %ld blocks leaked", n, persistent ? " (persistent)" : "",
             atomic_load(&a->live) - live);
  return !failed;
}

static void walk(const char *text, int nargs) {
  g_nargs = nargs;
  xrt_program *p = NULL;
  assert_int_equal(xrt_program_parse(text, strlen(text), NULL, &p), XRT_OK);
  char *bytes = NULL;
  size_t len = 0;
  assert_int_equal(xrt_program_serialize(p, NULL, &bytes, &len), XRT_OK);
  xrt_program_release(p);
  tu_counting_alloc a;
  tu_counting_init(&a, 0);
  xrt_client_options co;
  xrt_client_options_init(&co);
  co.threads_per_device = 1;
  co.allocator = tu_counting_allocator(&a);
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  /* a first compile: what the client keeps for later ones (a recycled
   * executable shell) is allocated before the walk counts blocks */
  assert_true(attempt(c, &a, bytes, len, 0, false));
  for (int persistent = 0; persistent < 2; persistent++) {
    long n = 1;
    while (!attempt(c, &a, bytes, len, n, persistent)) {
      n++;
      if (n > 100000) fail_msg("no end to the allocations");
    }
    assert_true(n > 10); /* reading and refining do allocate */
  }
  xrt_client_release(c);
  assert_int_equal(atomic_load(&a.live), 0);
  free(bytes);
}

static void test_read_and_refine_under_allocation_failures(void **state) {
  (void)state;
  walk(kDynamic, 1);
}

/* The same with a dimension argument: the refusal of the first attempt,
 * then the search for b's value, fail at every allocation too. */
static void test_dimension_search_under_allocation_failures(void **state) {
  (void)state;
  walk(kDimArg, 2);
}

TU_MAIN(NULL, NULL,
        cmocka_unit_test(test_read_and_refine_under_allocation_failures),
        cmocka_unit_test(test_dimension_search_under_allocation_failures))
