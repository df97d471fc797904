/*
 * test_multiprocess.c - the multi-process API in a build without MPI
 * (issue #11; test/mpi/ runs the real thing under mpirun): the xrt_mpi_*
 * calls say xrt was built without it, a client of one process is its own
 * global device set, and xrt_transport_install checks what it is given.
 * A transport of one process lets a client join "the system" in-process:
 * its devices are then numbered through the transport's device counts.
 */
#include "test_util.h"

static void test_mpi_calls_without_mpi(void **state) {
  (void)state;
#ifndef XRT_HAVE_MPI
  xrt_mpi_options o;
  xrt_mpi_options_init(&o);
  assert_int_equal(o.timeout_ms, 60000);
  assert_int_equal(o.topology.process_index, -1);
  assert_null(o.comm);
  assert_int_equal(xrt_mpi_init(&o), XRT_UNIMPLEMENTED);
  assert_non_null(strstr(xrt_last_error(), "XRT_MPI=1"));
  assert_int_equal(xrt_mpi_finalize(), XRT_UNIMPLEMENTED);
  xrt_topology t;
  assert_int_equal(xrt_mpi_topology(&t), XRT_UNIMPLEMENTED);
  assert_int_equal(xrt_mpi_set_timeout(10), XRT_UNIMPLEMENTED);
#endif
}

/* One process: global ids are local ids, every device is addressable. */
static void test_single_process_devices(void **state) {
  (void)state;
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 3;
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  assert_int_equal(xrt_client_global_device_count(c), 3);
  for (int i = 0; i < 3; i++) {
    xrt_device *d = xrt_client_global_device(c, i);
    assert_ptr_equal(d, xrt_client_device(c, i));
    assert_int_equal(xrt_device_global_id(d), i);
    assert_int_equal(xrt_device_process_index(d), 0);
    assert_int_equal(xrt_device_is_addressable(d), 1);
  }
  assert_null(xrt_client_global_device(c, 3));
  assert_int_equal(xrt_last_status(), XRT_OUT_OF_RANGE);
  assert_null(xrt_client_global_device(NULL, 0));
  assert_int_equal(xrt_last_status(), XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_client_global_device_count(NULL), -1);
  assert_int_equal(xrt_device_global_id(NULL), -1);
  assert_int_equal(xrt_device_process_index(NULL), -1);
  assert_int_equal(xrt_device_is_addressable(NULL), -1);
  xrt_client_release(c);
}

/* ---- an in-process transport of one process ---- */

static int tt_gathers, tt_exchanges;

static xrt_status tt_allgather(void *self, const void *in, void *out,
                               size_t bytes, char *err, size_t cap) {
  (void)self, (void)err, (void)cap;
  tt_gathers++;
  memcpy(out, in, bytes);
  return XRT_OK;
}

static xrt_status tt_exchange(void *self, uint64_t tag,
                              const xrt_transport_msg *sends, int ns,
                              const xrt_transport_msg *recvs, int nr,
                              char *err, size_t cap) {
  (void)self, (void)tag, (void)sends, (void)ns, (void)recvs, (void)nr;
  tt_exchanges++;
  snprintf(err, cap, "no peers");
  return XRT_UNAVAILABLE;
}

static xrt_transport tt_make(void) {
  xrt_transport t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  t.topology.process_index = 0;
  t.topology.process_count = 1;
  t.topology.local_world_size = 1;
  t.allgather = tt_allgather;
  t.exchange = tt_exchange;
  return t;
}

static void test_transport_checks(void **state) {
  (void)state;
  xrt_transport t = tt_make();
  t.struct_size = 8;
  assert_int_equal(xrt_transport_install(&t), XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), "struct_size"));
  t = tt_make();
  t.exchange = NULL;
  assert_int_equal(xrt_transport_install(&t), XRT_INVALID_ARGUMENT);
  t = tt_make();
  t.topology.process_index = 1; /* of 1 */
  assert_int_equal(xrt_transport_install(&t), XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), "process_index 1"));
  assert_int_equal(xrt_transport_install(NULL), XRT_OK);
}

/* A client joins through the transport (its device count is gathered);
 * one that asks for process_count 1 does not.  A program over all its
 * devices runs without any exchange (no group spans processes). */
static void test_join_through_transport(void **state) {
  (void)state;
  xrt_transport t = tt_make();
  assert_int_equal(xrt_transport_install(&t), XRT_OK);
  tt_gathers = tt_exchanges = 0;
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 2;
  xrt_client *c = NULL, *alone = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  assert_int_equal(tt_gathers, 1);
  o.topology.process_index = 0;
  o.topology.process_count = 1;
  assert_int_equal(xrt_client_create(&o, &alone), XRT_OK);
  assert_int_equal(tt_gathers, 1);
  assert_int_equal(xrt_transport_install(NULL), XRT_OK);
  assert_int_equal(xrt_client_global_device_count(c), 2);
  xrt_topology tp;
  assert_int_equal(xrt_client_topology(c, &tp), XRT_OK);
  assert_int_equal(tp.process_count, 1);
  const char *src =
      "module @m attributes {mhlo.num_replicas = 2 : i32} {\n"
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %r = \"stablehlo.all_reduce\"(%a) ({\n"
      "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "      %s = stablehlo.add %x, %y : tensor<f32>\n"
      "      stablehlo.return %s : tensor<f32>\n"
      "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}\n"
      "    : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %r : tensor<2xf32>\n}\n}\n";
  xrt_executable *e = NULL;
  assert_int_equal(xrt_compile(c, src, strlen(src), NULL, &e), XRT_OK);
  float in[2][2] = {{1, 2}, {10, 20}}, out[2][2];
  xrt_shape sh = TU_SHAPE(XRT_F32, 2);
  xrt_buffer *a[2], *r[2] = {NULL, NULL};
  xrt_buffer *const *lists[2] = {&a[0], &a[1]};
  xrt_buffer **olists[2] = {&r[0], &r[1]};
  for (int p = 0; p < 2; p++)
    assert_int_equal(xrt_buffer_from_host(c, xrt_executable_device(e, p), &sh,
                                          in[p], &a[p]), XRT_OK);
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_multi(e, lists, 2, 1, olists, 1, NULL, &done),
                   XRT_OK);
  assert_int_equal(xrt_event_await(done), XRT_OK);
  xrt_event_release(done);
  for (int p = 0; p < 2; p++) {
    assert_int_equal(xrt_buffer_to_host(r[p], out[p], sizeof out[p]), XRT_OK);
    assert_true(out[p][0] == 11 && out[p][1] == 22);
  }
  assert_int_equal(tt_exchanges, 0);
  /* More participants than the system has devices. */
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.num_replicas = 3;
  xrt_executable *e3 = NULL;
  assert_int_equal(xrt_compile(c, src, strlen(src), &co, &e3),
                   XRT_INVALID_ARGUMENT);
  assert_non_null(strstr(xrt_last_error(), "processes have 2"));
  xrt_client_release(c);
  xrt_client_release(alone);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mpi_calls_without_mpi),
      cmocka_unit_test(test_single_process_devices),
      cmocka_unit_test(test_transport_checks),
      cmocka_unit_test(test_join_through_transport),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
