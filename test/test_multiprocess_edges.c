/*
 * test_multiprocess_edges.c - the checks of the multi-process layer
 * (src/core/multiprocess.c) in one process, without MPI: a transport of
 * this test's own makes the client believe in a second process (its
 * allgather answers for the peer; its exchange has no peer to talk to), so
 * that everything checked before any message would be sent is reached:
 * transport installation, a device-count gather that fails or reports
 * nonsense, xrt_client_process_exchange/allgather arguments, device
 * assignments over global ids, xrt_execute_multi's list checks and a
 * launch whose participants all live on the other process (done at once),
 * the plugin's exchange service, and xrt_report_error.  In "mirror" mode
 * the imaginary peer sends back what it is sent (a peer that votes and
 * behaves as this process does), which lets the collective variable and
 * sharded-array calls run: their argument checks agreed across processes,
 * save/load/reshard/read of pieces on both processes, and host memory
 * running out at each allocation of them (this found a double free of
 * the assembly plan in src/core/sharding.c).  The device-count check found
 * a use after free in src/core/multiprocess.c (both fixed).
 */
#include "test_plugin_abi.h"

/* ---- a transport of two processes, the other one imaginary ---- */

typedef struct fake_tp {
  int peer_devices;   /* what the allgather says the peer has */
  xrt_status gather;  /* the allgather's status */
  const char *gather_msg;
  int gathers, exchanges;
  const char *exchange_msg; /* the exchange's message (may be "") */
  /* A mirror peer: every receive from process 1 gets the bytes of the
   * send to it of the same size (a peer that votes as this process does);
   * a receive without such a send fails. */
  bool mirror;
} fake_tp;

static fake_tp ft;

static xrt_status ft_allgather(void *self, const void *in, void *out,
                               size_t bytes, char *err, size_t cap) {
  fake_tp *f = (fake_tp *)self;
  f->gathers++;
  if (f->gather) {
    snprintf(err, cap, "%s", f->gather_msg);
    return f->gather;
  }
  memcpy(out, in, bytes); /* process 0 */
  if (bytes == sizeof(int)) memcpy((char *)out + bytes, &f->peer_devices, 4);
  else memset((char *)out + bytes, 0, bytes);
  return XRT_OK;
}

static xrt_status ft_exchange(void *self, uint64_t tag,
                              const xrt_transport_msg *sends, int ns,
                              const xrt_transport_msg *recvs, int nr,
                              char *err, size_t cap) {
  fake_tp *f = (fake_tp *)self;
  (void)tag;
  f->exchanges++;
  if (f->mirror) {
    for (int r = 0; r < nr; r++) {
      int found = -1;
      for (int k = 0; k < ns && found < 0; k++)
        if (sends[k].bytes == recvs[r].bytes) found = k;
      if (found < 0) {
        snprintf(err, cap, "the mirror has nothing of %zu bytes",
                 recvs[r].bytes);
        return XRT_UNAVAILABLE;
      }
      if (recvs[r].bytes)
        memcpy(recvs[r].data, sends[found].data, recvs[r].bytes);
    }
    return XRT_OK;
  }
  snprintf(err, cap, "%s", f->exchange_msg);
  return XRT_UNAVAILABLE;
}

static void ft_install(int peer_devices) {
  memset(&ft, 0, sizeof ft);
  ft.peer_devices = peer_devices;
  ft.exchange_msg = "no peer here";
  xrt_transport t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  t.self = &ft;
  t.topology.process_index = 0;
  t.topology.process_count = 2;
  t.topology.host_index = 0;
  t.topology.local_rank = 0;
  t.topology.local_world_size = 2;
  t.allgather = ft_allgather;
  t.exchange = ft_exchange;
  assert_int_equal(xrt_transport_install(&t), XRT_OK);
}

static xrt_client *ft_client(void) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 2;
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK)
    fail_msg("client: %s", xrt_last_error());
  return c;
}

/* A client of two processes (the peer a mirror: it votes as this process
 * does and sends back what it is sent) whose host memory comes from a
 * (NULL: the default), with the transport installed; g its four global
 * devices. */
static xrt_client *mirror_client(tu_counting_alloc *a, xrt_device *g[4]) {
  ft_install(2);
  ft.mirror = true;
  xrt_client *c = a ? tu_client_counted(2, a) : ft_client();
  assert_int_equal(xrt_transport_install(NULL), XRT_OK);
  for (int i = 0; i < 4; i++) g[i] = xrt_client_global_device(c, i);
  return c;
}

static void test_install_checks(void **state) {
  (void)state;
  xrt_transport t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  t.allgather = ft_allgather;
  t.exchange = ft_exchange;
  t.topology.process_count = 0;
  assert_int_equal(xrt_transport_install(&t), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "process_index 0 is outside 0..-1");
  t.topology.process_count = 2;
  t.topology.process_index = -1;
  assert_int_equal(xrt_transport_install(&t), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "process_index -1 is outside 0..1");
  t.topology.process_index = 0;
  t.allgather = NULL;
  assert_int_equal(xrt_transport_install(&t), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "allgather or exchange is NULL");
}

/* Client creation gathers every process's device count. */
static void test_join_failures(void **state) {
  (void)state;
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 2;
  xrt_client *c = NULL;
  ft_install(2);
  ft.gather = XRT_DEADLINE_EXCEEDED;
  ft.gather_msg = "the peer is late";
  assert_int_equal(xrt_client_create(&o, &c), XRT_DEADLINE_EXCEEDED);
  assert_null(c);
  TU_ASSERT_CONTAINS(xrt_last_error(), "client creation: gathering every "
                     "process's device count failed: the peer is late");
  static const int bad_counts[] = {0, -3, 65537};
  for (size_t i = 0; i < TU_COUNT(bad_counts); i++) {
    ft_install(bad_counts[i]);
    assert_int_equal(xrt_client_create(&o, &c), XRT_INTERNAL);
    assert_null(c);
    char want[96];
    snprintf(want, sizeof want, "process 1 reports %d devices",
             bad_counts[i]);
    TU_ASSERT_CONTAINS(xrt_last_error(), want);
  }
  /* the most a process may have */
  ft_install(65536);
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  assert_int_equal(xrt_client_global_device_count(c), 65538);
  xrt_client_release(c);
  assert_int_equal(xrt_transport_install(NULL), XRT_OK);
}

static void test_process_messages(void **state) {
  (void)state;
  ft_install(3);
  xrt_client *c = ft_client();
  assert_int_equal(xrt_transport_install(NULL), XRT_OK);
  assert_int_equal(xrt_client_global_device_count(c), 5);
  xrt_topology tp;
  assert_int_equal(xrt_client_topology(c, &tp), XRT_OK);
  assert_int_equal(tp.process_count, 2);
  assert_int_equal(tp.process_index, 0);
  assert_int_equal(tp.local_world_size, 2);
  /* the peer's devices: ids 2..4, process 1, not addressable */
  xrt_device *d = xrt_client_global_device(c, 4);
  assert_non_null(d);
  assert_int_equal(xrt_device_global_id(d), 4);
  assert_int_equal(xrt_device_process_index(d), 1);
  assert_int_equal(xrt_device_is_addressable(d), 0);
  int x = 7;
  xrt_transport_msg good = {1, &x, sizeof x};
  xrt_transport_msg to_me = {0, &x, sizeof x};
  xrt_transport_msg far = {2, &x, sizeof x};
  xrt_transport_msg neg = {-1, &x, sizeof x};
  xrt_transport_msg nodata = {1, NULL, 4};
  xrt_transport_msg empty = {1, NULL, 0};
  assert_int_equal(xrt_client_process_exchange(c, XRT_USER_TAG_LIMIT, &good,
                                               1, NULL, 0),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "is not below XRT_USER_TAG_LIMIT");
  assert_int_equal(xrt_client_process_exchange(c, 1, &good, -1, NULL, 0),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "negative message count");
  assert_int_equal(xrt_client_process_exchange(c, 1, &good, 0, NULL, -2),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_client_process_exchange(c, 1, NULL, 1, NULL, 0),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "sends or recvs is NULL");
  assert_int_equal(xrt_client_process_exchange(c, 1, NULL, 0, NULL, 1),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_client_process_exchange(c, 1, &to_me, 1, NULL, 0),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "sends[0].peer is 0: another process "
                                       "of 0..1 is needed");
  assert_int_equal(xrt_client_process_exchange(c, 1, NULL, 0, &far, 1),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "recvs[0].peer is 2");
  assert_int_equal(xrt_client_process_exchange(c, 1, NULL, 0, &neg, 1),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "recvs[0].peer is -1");
  xrt_transport_msg two[2] = {good, nodata};
  assert_int_equal(xrt_client_process_exchange(c, 1, two, 2, NULL, 0),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "sends[1].data is NULL");
  assert_int_equal(ft.exchanges, 0); /* nothing was sent so far */
  /* good messages reach the transport; its failure is reported */
  assert_int_equal(xrt_client_process_exchange(c, 1, &good, 1, &empty, 1),
                   XRT_UNAVAILABLE);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "xrt_client_process_exchange: no peer here");
  assert_int_equal(ft.exchanges, 1);
  /* without a message the status names itself */
  ft.exchange_msg = "";
  assert_int_equal(xrt_client_process_exchange(c, 1, &good, 1, NULL, 0),
                   XRT_UNAVAILABLE);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_client_process_exchange: ");
  assert_true(strlen(xrt_last_error()) > strlen("xrt_client_process_exchange: "));
  /* allgather: arguments, then the exchange it is made of */
  int out[2];
  assert_int_equal(xrt_client_process_allgather(c, NULL, out, 4),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "in or out is NULL");
  assert_int_equal(xrt_client_process_allgather(c, &x, NULL, 4),
                   XRT_INVALID_ARGUMENT);
  assert_int_equal(xrt_client_process_allgather(NULL, &x, out, 4),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "invalid client");
  ft.exchange_msg = "gone";
  out[0] = out[1] = -1;
  assert_int_equal(xrt_client_process_allgather(c, &x, out, sizeof x),
                   XRT_UNAVAILABLE);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_client_process_allgather: gone");
  assert_int_equal(out[0], 7); /* its own part is in place */
  assert_int_equal(xrt_client_process_exchange(NULL, 1, &good, 1, NULL, 0),
                   XRT_INVALID_ARGUMENT);
  xrt_client_release(c);
  /* a client of one process has no one to exchange with */
  xrt_client *one = tu_client(1, 0, 0);
  assert_int_equal(xrt_client_process_exchange(one, 1, NULL, 0, NULL, 0),
                   XRT_FAILED_PRECONDITION);
  TU_ASSERT_CONTAINS(xrt_last_error(), "the client is of one process");
  assert_int_equal(xrt_client_process_allgather(one, &x, out, sizeof x),
                   XRT_OK);
  assert_int_equal(out[0], 7);
  xrt_client_release(one);
}

static const char *add1 =
    "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
    "  %0 = stablehlo.add %a, %one : tensor<2xf32>\n"
    "  func.return %0 : tensor<2xf32>\n}\n";

static xrt_status compile_on(xrt_client *c, int replicas, const int *assign,
                             xrt_executable **e) {
  xrt_compile_options o;
  xrt_compile_options_init(&o);
  o.num_replicas = replicas;
  o.device_assignment = assign;
  *e = NULL;
  return xrt_compile(c, add1, strlen(add1), &o, e);
}

static void test_assignment_and_launch(void **state) {
  (void)state;
  ft_install(2);
  xrt_client *c = ft_client();
  assert_int_equal(xrt_transport_install(NULL), XRT_OK);
  xrt_executable *e = NULL;
  static const int out_of_range[2] = {0, 4}, twice[2] = {1, 1},
                   negative[2] = {-1, 0};
  assert_int_equal(compile_on(c, 2, out_of_range, &e), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device_assignment[1] is 4, outside "
                                       "the global ids 0..3");
  assert_int_equal(compile_on(c, 2, negative, &e), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device_assignment[0] is -1");
  assert_int_equal(compile_on(c, 2, twice, &e), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "device_assignment[0] and [1] are "
                                       "both device 1");
  assert_int_equal(compile_on(c, 5, NULL, &e), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "need 5 devices, the 2 processes "
                                       "have 4");
  assert_int_equal(compile_on(c, -2, NULL, &e), XRT_INVALID_ARGUMENT);
  assert_null(e);
  /* four replicas: 0 and 1 here, 2 and 3 on the peer */
  assert_int_equal(compile_on(c, 4, NULL, &e), XRT_OK);
  float v[2] = {1, 2};
  xrt_shape sh = TU_SHAPE(XRT_F32, 2);
  xrt_buffer *a0 = NULL, *a1 = NULL;
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 0), &sh, v,
                                        &a0), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, xrt_client_device(c, 1), &sh, v,
                                        &a1), XRT_OK);
  xrt_buffer *const l0[1] = {a0}, *const l1[1] = {a1};
  xrt_buffer *const *lists[4] = {l0, l1, NULL, NULL};
  xrt_buffer *r0[1] = {NULL}, *r1[1] = {NULL};
  xrt_buffer **outs[4] = {r0, r1, NULL, NULL};
  xrt_event *done = NULL;
  assert_int_equal(xrt_execute_multi(e, lists, 3, 1, outs, 1, NULL, &done),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "num_lists is 3, @main runs on 4 "
                     "replica(s) x 1 partition(s) = 4 device(s) of all "
                     "processes");
  assert_int_equal(xrt_execute_multi(e, lists, 4, 2, outs, 1, NULL, &done),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "@main takes 1 argument(s), got 2");
  assert_int_equal(xrt_execute_multi(e, lists, 4, 1, outs, 0, NULL, &done),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "@main returns 1 result(s), room for "
                                       "0 was given");
  xrt_execute_options eo;
  xrt_execute_options_init(&eo);
  xrt_device *dv[1] = {xrt_client_device(c, 0)};
  eo.devices = dv;
  assert_int_equal(xrt_execute_multi(e, lists, 4, 1, outs, 1, &eo, &done),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "options.devices: a launch over "
                                       "several processes");
  assert_int_equal(xrt_execute_multi(e, NULL, 4, 1, outs, 1, NULL, &done),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument_lists is NULL");
  assert_int_equal(xrt_execute_multi(e, lists, 4, 1, NULL, 1, NULL, &done),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "output_lists is NULL");
  lists[1] = NULL;
  assert_int_equal(xrt_execute_multi(e, lists, 4, 1, outs, 1, NULL, &done),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "the argument or output list of "
                                       "participant 1 (on this process) is "
                                       "NULL");
  lists[1] = l1;
  outs[0] = NULL;
  assert_int_equal(xrt_execute_multi(e, lists, 4, 1, outs, 1, NULL, &done),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "participant 0 (on this process)");
  assert_null(done);
  xrt_executable_release(e);
  /* participants only on the peer: nothing to run here, done at once */
  static const int theirs[2] = {2, 3};
  assert_int_equal(compile_on(c, 2, theirs, &e), XRT_OK);
  xrt_buffer *const *none[2] = {NULL, NULL};
  xrt_buffer **nouts[2] = {NULL, NULL};
  assert_int_equal(xrt_execute_multi(e, none, 2, 1, nouts, 1, NULL, &done),
                   XRT_OK);
  assert_non_null(done);
  assert_int_equal(xrt_event_await(done), XRT_OK);
  xrt_event_release(done);
  assert_int_equal(xrt_execute_multi(e, none, 2, 1, nouts, 1, NULL, NULL),
                   XRT_OK);
  xrt_executable_release(e);
  xrt_buffer_release(a0);
  xrt_buffer_release(a1);
  xrt_client_release(c);
}


/* xrt_execute_variables on a client of two processes, the peer a mirror
 * (it votes as this process does): the checks of the arguments against
 * the executable's participants are made in every process and agreed on,
 * so each failure comes back as "process 0 failed: ..."; a good call runs
 * this process's participants and updates its pieces. */
static void test_variables_across_processes(void **state) {
  (void)state;
  xrt_device *g[4];
  xrt_client *c = mirror_client(NULL, g);
  xrt_sharding_spec s = tu_spec_replicated(1, 4);
  xrt_shape sh = TU_SHAPE(XRT_F32, 2);
  float x[2] = {1.5f, -2};
  xrt_variable_format f4 = {&s, g, 4};
  xrt_variable *v = NULL, *wrong = NULL, *two = NULL;
  assert_int_equal(xrt_variable_create(c, "v", &sh, x, &f4, &v), XRT_OK);
  xrt_device *swapped[4] = {g[1], g[0], g[2], g[3]};
  xrt_variable_format fw = {&s, swapped, 4};
  assert_int_equal(xrt_variable_create(c, "w", &sh, x, &fw, &wrong), XRT_OK);
  xrt_sharding_spec s2 = s;
  s2.mesh[0].replicas = 2;
  xrt_variable_format f2 = {&s2, g, 2};
  assert_int_equal(xrt_variable_create(c, "t", &sh, x, &f2, &two), XRT_OK);
  xrt_executable *e = NULL;
  assert_int_equal(compile_on(c, 4, NULL, &e), XRT_OK);
  xrt_variable_arg a1[1] = {{two, NULL}};
  xrt_sharded_array *out[1] = {NULL};
  assert_int_equal(xrt_execute_variables(e, a1, 1, NULL, out, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_execute_variables: process 0 "
                     "failed: argument 0 spans 2 devices, @main runs on 4");
  a1[0].variable = wrong;
  assert_int_equal(xrt_execute_variables(e, a1, 1, NULL, out, 1, NULL),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "argument 0 has piece 0 on global "
                     "device 1, @main runs participant 0 on global device 0");
  assert_null(out[0]);
  /* v = v + 1 in place (this process's two pieces) */
  a1[0].variable = v;
  static const int upd[1] = {0};
  assert_int_equal(xrt_execute_variables(e, a1, 1, upd, out, 1, NULL),
                   XRT_OK);
  assert_null(out[0]);
  /* a sharded array argument of this process's pieces (NULL elsewhere) */
  xrt_buffer *b0 = NULL, *b1 = NULL;
  assert_int_equal(xrt_buffer_from_host(c, g[0], &sh, x, &b0), XRT_OK);
  assert_int_equal(xrt_buffer_from_host(c, g[1], &sh, x, &b1), XRT_OK);
  xrt_buffer *bufs[4] = {b0, b1, NULL, NULL};
  xrt_sharded_array *arr = NULL;
  assert_int_equal(xrt_sharded_array_create_global(c, &sh, &s, g, bufs, 4,
                                                   &arr), XRT_OK);
  assert_null(xrt_sharded_array_shard(arr, 3));
  assert_int_equal(xrt_last_status(), XRT_FAILED_PRECONDITION);
  xrt_variable_arg a2[1] = {{NULL, arr}};
  assert_int_equal(xrt_execute_variables(e, a2, 1, NULL, out, 1, NULL),
                   XRT_OK);
  assert_non_null(out[0]);
  assert_int_equal(xrt_sharded_array_num_shards(out[0]), 4);
  /* its piece on device 0 is x + 1 */
  float got[2];
  assert_int_equal(xrt_buffer_to_host(xrt_sharded_array_shard(out[0], 0), got,
                                      sizeof got), XRT_OK);
  assert_true(got[0] == 2.5f && got[1] == -1.0f);
  xrt_sharded_array_release(out[0]);
  xrt_sharded_array_release(arr);
  xrt_executable_release(e);
  xrt_variable_release(two);
  xrt_variable_release(wrong);
  xrt_variable_release(v);
  xrt_client_release(c);
}


/* The collective variable calls on a client of two processes (the peer a
 * mirror): a replicated variable is read whole from this process's own
 * pieces, saved by process 0, loaded by every process, and moved between
 * formats; every call agrees with the peer. */
static void test_variable_io_across_processes(void **state) {
  (void)state;
  xrt_device *g[4];
  xrt_client *c = mirror_client(NULL, g);
  xrt_sharding_spec s = tu_spec_replicated(1, 4);
  xrt_shape sh = TU_SHAPE(XRT_F32, 4);
  float x[4] = {1, 2, 3, 4}, got[4] = {0, 0, 0, 0};
  xrt_variable_format f4 = {&s, g, 4};
  xrt_variable *v = NULL;
  assert_int_equal(xrt_variable_create(c, "v", &sh, x, &f4, &v), XRT_OK);
  xrt_status st = xrt_variable_to_host(v, got, sizeof got);
  if (st) fail_msg("to_host: %s", xrt_last_error());
  for (int i = 0; i < 4; i++) assert_true(got[i] == x[i]);
  const char *t = getenv("TMPDIR");
  char path[600];
  snprintf(path, sizeof path, "%s/xrt_mp_edges_%ld.npy", t && *t ? t : "/tmp",
           (long)ft.exchanges);
  st = xrt_variable_save(v, path);
  if (st) fail_msg("save: %s", xrt_last_error());
  float y[4] = {9, 9, 9, 9};
  xrt_variable *w = NULL;
  assert_int_equal(xrt_variable_create(c, "w", &sh, y, &f4, &w), XRT_OK);
  st = xrt_variable_load(w, path);
  if (st) fail_msg("load: %s", xrt_last_error());
  assert_int_equal(xrt_variable_to_host(w, got, sizeof got), XRT_OK);
  for (int i = 0; i < 4; i++) assert_true(got[i] == x[i]);
  /* a missing file: every process fails, the variable is unchanged */
  char missing[640];
  snprintf(missing, sizeof missing, "%s.missing", path);
  assert_int_equal(xrt_variable_load(w, missing), XRT_NOT_FOUND);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_variable_load: process 0 failed");
  assert_int_equal(xrt_variable_to_host(w, got, sizeof got), XRT_OK);
  for (int i = 0; i < 4; i++) assert_true(got[i] == x[i]);
  /* onto this process's two devices only (replicated twice): nothing
   * needs to come from the peer */
  xrt_sharding_spec s2 = s;
  s2.mesh[0].replicas = 2;
  xrt_variable_format f2 = {&s2, g, 2};
  st = xrt_variables_reshard(&w, &f2, 1, NULL);
  if (st) fail_msg("reshard: %s", xrt_last_error());
  assert_int_equal(xrt_variable_num_devices(w), 2);
  assert_ptr_equal(xrt_variable_device(w, 0), g[0]);
  assert_ptr_equal(xrt_variable_device(w, 1), g[1]);
  /* (reading it back would need a peer that answers with a message of
   * its own: the mirror only echoes) */
  remove(path);
  xrt_variable_release(w);
  xrt_variable_release(v);
  xrt_client_release(c);
}


/* The exchange service a plugin gets on a client of several processes:
 * it reaches the transport (its failure and message come back in the
 * plugin's error, or nowhere when it gives none); without a client it
 * refuses. */
static void test_plugin_exchange(void **state) {
  (void)state;
  xrt_context *x = tu_spy_context();
  ft_install(2);
  xrt_client_options o = tu_client_options(x, "spy", 2);
  xrt_client *c = NULL;
  assert_int_equal(xrt_client_create(&o, &c), XRT_OK);
  assert_int_equal(xrt_transport_install(NULL), XRT_OK);
  const xrt_plugin_host_api *h = *tu_spy_host();
  assert_non_null(h);
  assert_non_null(h->exchange);
  assert_int_equal(h->process_index, 0);
  assert_int_equal(h->process_count, 2);
  int v = 3;
  xrt_transport_msg m = {1, &v, sizeof v};
  xrt_plugin_error err;
  memset(&err, 0, sizeof err);
  int before = ft.exchanges;
  assert_int_equal(h->exchange(h->ctx, 5, &m, 1, NULL, 0, &err),
                   XRT_UNAVAILABLE);
  assert_string_equal(err.message, "no peer here");
  assert_int_equal(h->exchange(h->ctx, 6, &m, 1, NULL, 0, NULL),
                   XRT_UNAVAILABLE);
  assert_int_equal(ft.exchanges, before + 2);
  memset(&err, 0, sizeof err);
  assert_int_equal(h->exchange(NULL, 7, &m, 1, NULL, 0, &err),
                   XRT_FAILED_PRECONDITION);
  assert_string_equal(err.message, "exchange: the client is of one process");
  assert_int_equal(h->exchange(NULL, 7, &m, 1, NULL, 0, NULL),
                   XRT_FAILED_PRECONDITION);
  xrt_client_release(c);
  assert_int_equal(xrt_context_release(x), XRT_OK);
}


/* Arrays and variables whose pieces lie on both processes, the peer a
 * mirror (it sends back what it is sent, so it holds the same pieces as
 * this process, shifted by two devices): an array chunked in four is read
 * whole (this process's half is exact), and a variable moves from
 * replicated on all four devices to chunked in four and back, pieces
 * crossing between the processes. */
static void test_pieces_across_processes(void **state) {
  (void)state;
  xrt_device *g[4];
  xrt_client *c = mirror_client(NULL, g);
  xrt_sharding_spec ch = tu_spec_chunked(1, 0, 4);
  xrt_shape sh = TU_SHAPE(XRT_F32, 8);
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, got[8];
  xrt_sharded_array *a = NULL;
  assert_int_equal(xrt_sharded_array_from_host(c, &sh, x, &ch, g, 4, &a),
                   XRT_OK);
  memset(got, 0, sizeof got);
  xrt_status st = xrt_sharded_array_to_host(a, got, sizeof got);
  if (st) fail_msg("to_host: %s", xrt_last_error());
  for (int i = 0; i < 4; i++) assert_true(got[i] == x[i]);
  xrt_sharded_array_release(a);
  /* a variable: replicated on 4 -> chunked in 4 -> replicated */
  xrt_sharding_spec rep = tu_spec_replicated(1, 4);
  xrt_variable_format fr = {&rep, g, 4}, fc = {&ch, g, 4};
  xrt_variable *v = NULL;
  assert_int_equal(xrt_variable_create(c, "v", &sh, x, &fr, &v), XRT_OK);
  st = xrt_variables_reshard(&v, &fc, 1, NULL);
  if (st) fail_msg("reshard: %s", xrt_last_error());
  xrt_sharding_spec back;
  assert_int_equal(xrt_variable_spec(v, &back), XRT_OK);
  assert_int_equal(back.dims[0].kind, XRT_DIM_CHUNKED);
  st = xrt_variables_reshard(&v, &fr, 1, NULL);
  if (st) fail_msg("reshard back: %s", xrt_last_error());
  assert_int_equal(xrt_variable_spec(v, &back), XRT_OK);
  assert_int_equal(back.dims[0].kind, XRT_DIM_NO_SHARDING);
  /* in the target format already: one exchange, nothing moves */
  int before = ft.exchanges;
  assert_int_equal(xrt_variables_reshard(&v, &fr, 1, NULL), XRT_OK);
  assert_true(ft.exchanges > before);
  xrt_variable_release(v);
  xrt_client_release(c);
}


/* Host memory running out at each allocation of a variable's creation and
 * of a reshard across the two processes (the mirror peer fails alike):
 * each failure is RESOURCE_EXHAUSTED, agreed by both, and leaves the
 * variable in its format; nothing leaks. */
static void test_out_of_memory_across_processes(void **state) {
  (void)state;
  tu_counting_alloc ca;
  xrt_device *g[4];
  xrt_client *c = mirror_client(&ca, g);
  xrt_sharding_spec rep = tu_spec_replicated(1, 4),
                    ch = tu_spec_chunked(1, 0, 4);
  xrt_variable_format fr = {&rep, g, 4}, fc = {&ch, g, 4};
  xrt_shape sh = TU_SHAPE(XRT_F32, 8);
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  xrt_log_set_callback(tu_quiet_log, NULL);
  xrt_variable *v = NULL;
  int failures = 0;
  for (long k = 1; k < 100; k++) {
    tu_counting_arm(&ca, k);
    xrt_status st = xrt_variable_create(c, "v", &sh, x, &fr, &v);
    bool injected = tu_counting_disarm(&ca);
    if (st == XRT_OK) {
      if (!injected) break;
      xrt_variable_release(v);
      v = NULL;
      continue;
    }
    assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
    assert_null(v);
    failures++;
  }
  assert_non_null(v);
  assert_true(failures >= 1);
  failures = 0;
  for (long k = 1; k < 300; k++) {
    tu_counting_arm(&ca, k);
    xrt_status st = xrt_variables_reshard(&v, &fc, 1, NULL);
    bool injected = tu_counting_disarm(&ca);
    xrt_sharding_spec now;
    assert_int_equal(xrt_variable_spec(v, &now), XRT_OK);
    if (st == XRT_OK) {
      assert_int_equal(now.dims[0].kind, XRT_DIM_CHUNKED);
      if (!injected) break;
      assert_int_equal(xrt_variables_reshard(&v, &fr, 1, NULL), XRT_OK);
      continue;
    }
    assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
    assert_int_equal(now.dims[0].kind, XRT_DIM_NO_SHARDING); /* unchanged */
    failures++;
  }
  assert_true(failures >= 3);
  /* save (process 0 writes) and load, every allocation failing in turn */
  const char *t = getenv("TMPDIR");
  char path[600];
  snprintf(path, sizeof path, "%s/xrt_mp_oom_%d.npy", t && *t ? t : "/tmp",
           (int)atomic_load(&ca.calls) % 100000);
  for (int op = 0; op < 2; op++) {
    failures = 0;
    for (long k = 1; k < 300; k++) {
      tu_counting_arm(&ca, k);
      xrt_status st = op == 0 ? xrt_variable_save(v, path)
                              : xrt_variable_load(v, path);
      bool injected = tu_counting_disarm(&ca);
      if (st == XRT_OK) {
        if (!injected) break;
        continue;
      }
      assert_int_equal(st, XRT_RESOURCE_EXHAUSTED);
      failures++;
    }
    assert_true(failures >= 1);
  }
  /* the half that never left this process is intact (the other half
   * went through the mirror, which sends back this process's pieces) */
  float got[8];
  assert_int_equal(xrt_variable_to_host(v, got, sizeof got), XRT_OK);
  for (int i = 0; i < 4; i++) assert_true(got[i] == x[i]);
  remove(path);
  xrt_log_set_callback(NULL, NULL);
  xrt_variable_release(v);
  xrt_client_release(c);
  assert_int_equal(atomic_load(&ca.live), 0);
}

/* xrt_report_error: the message and the code, or none. */
static void test_report_error(void **state) {
  (void)state;
  assert_int_equal(xrt_report_error(XRT_ABORTED, "ext %d", 5), XRT_ABORTED);
  assert_string_equal(xrt_last_error(), "ext 5");
  assert_int_equal(xrt_last_status(), XRT_ABORTED);
  assert_int_equal(xrt_report_error(XRT_UNKNOWN, NULL), XRT_UNKNOWN);
  assert_string_equal(xrt_last_error(), "");
  assert_int_equal(xrt_report_error(XRT_OK, "fine"), XRT_OK);
  assert_string_equal(xrt_last_error(), "fine");
  assert_int_equal(xrt_last_status(), XRT_OK);
}

TU_MAIN(NULL, NULL, cmocka_unit_test(test_install_checks),
        cmocka_unit_test(test_join_failures),
        cmocka_unit_test(test_process_messages),
        cmocka_unit_test(test_assignment_and_launch),
        cmocka_unit_test(test_variables_across_processes),
        cmocka_unit_test(test_variable_io_across_processes),
        cmocka_unit_test(test_plugin_exchange),
        cmocka_unit_test(test_pieces_across_processes),
        cmocka_unit_test(test_out_of_memory_across_processes),
        cmocka_unit_test(test_report_error))
