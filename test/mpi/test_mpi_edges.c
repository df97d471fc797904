/*
 * test_mpi_edges.c - the edges of src/mpi/mpi.c, xrt's MPI transport
 * (issue #25): the calls before xrt_mpi_init and after xrt_mpi_finalize,
 * bad options and topologies (given fields, environment variables, a
 * communicator of MPI_COMM_NULL, an intercommunicator, or one of this
 * process alone), a topology whose ranks the environment permutes, and
 * the transport's exchange reached directly, without the core's checks
 * in front of it, through the exchange service the core gives a plugin
 * (xrt_plugin_host_api): bad message lists, more messages than the
 * exchange keeps on its stack, a message of more than one MPI piece
 * (1 GiB), waits that time out or have no deadline, and a receive that
 * MPI itself fails (a message longer than the receive); last, a client
 * that process 0 does not create, whose join (the transport's allgather)
 * the others give up on.  Run by `make test-mpi` under mpirun with 2 and
 * 4 processes.
 *
 * Unlike the other tests of test/mpi, this program starts MPI itself, at
 * MPI_THREAD_SERIALIZED: xrt_mpi_init then finds MPI running and must
 * serialize its MPI calls; and at the end, once the program has called
 * MPI_Finalize, xrt_mpi_init must refuse.  Exchanges that time out are
 * between a process and itself (messages to self), so that no other
 * process has to skip anything.  Every failing xrt_mpi_init fails alike
 * in every process, since the processes take part in its collectives.
 */
#define _POSIX_C_SOURCE 200809L
#include "mpi_util.h"

#include <stdlib.h>
#include <time.h>

#define ME_MAXP 64 /* processes */

static struct {
  int rank, np; /* in MPI_COMM_WORLD */
  xrt_plugin_api table; /* the sim plugin, client_create wrapped */
  const xrt_plugin_host_api *host; /* what the core gave the last client */
} me;

/* The core's services of the client being created: kept for the tests. */
static xrt_status me_client_create(const xrt_plugin_client_args *args,
                                   void **out, xrt_plugin_error *err) {
  me.host = args->host;
  return xrt_sim_plugin_api()->client_create(args, out, err);
}

/* The environment variables xrt_mpi_init reads, cleared. */
static void me_clear_env(void) {
  static const char *const vars[] = {"RANK", "WORLD_SIZE", "XRT_HOST_INDEX",
                                     "GROUP_RANK", "NODE_RANK", "LOCAL_RANK",
                                     "LOCAL_WORLD_SIZE"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

/* xrt_mpi_init(o) fails with code and a message containing want; xrt
 * stays uninitialized. */
static void me_init_fails(const xrt_mpi_options *o, xrt_status code,
                          const char *want) {
  assert_int_equal(xrt_mpi_init(o), code);
  TU_ASSERT_CONTAINS(xrt_last_error(), want);
  xrt_topology t;
  assert_int_equal(xrt_mpi_topology(&t), XRT_FAILED_PRECONDITION);
}

/* Every call before xrt_mpi_init, and the defaults. */
static void test_before_init(void **state) {
  (void)state;
  assert_int_equal(xrt_mpi_finalize(), XRT_FAILED_PRECONDITION);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_mpi_finalize: not initialized");
  assert_int_equal(xrt_mpi_set_timeout(5), XRT_FAILED_PRECONDITION);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "xrt_mpi_set_timeout: xrt_mpi_init was not called");
  assert_int_equal(xrt_mpi_topology(NULL), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_mpi_topology: out is NULL");
  xrt_topology t;
  assert_int_equal(xrt_mpi_topology(&t), XRT_FAILED_PRECONDITION);
  TU_ASSERT_CONTAINS(xrt_last_error(),
                     "xrt_mpi_topology: xrt_mpi_init was not called");
  xrt_mpi_options_init(NULL); /* no-op */
  xrt_mpi_options o;
  memset(&o, 0x5a, sizeof o);
  xrt_mpi_options_init(&o);
  assert_null(o.comm);
  assert_int_equal(o.topology.process_index, -1);
  assert_int_equal(o.topology.process_count, -1);
  assert_int_equal(o.topology.host_index, -1);
  assert_int_equal(o.topology.local_rank, -1);
  assert_int_equal(o.topology.local_world_size, -1);
  assert_int_equal(o.timeout_ms, 60000);
}

/* Options refused before any collective. */
static void test_bad_options(void **state) {
  (void)state;
  xrt_mpi_options o;
  xrt_mpi_options_init(&o);
  o.timeout_ms = -1;
  me_init_fails(&o, XRT_INVALID_ARGUMENT, "xrt_mpi_init: timeout_ms is -1");
  xrt_mpi_options_init(&o);
  MPI_Comm null = MPI_COMM_NULL;
  o.comm = &null;
  me_init_fails(&o, XRT_INVALID_ARGUMENT,
                "xrt_mpi_init: options.comm points at MPI_COMM_NULL");
  /* An intercommunicator between the even and the odd ranks (Open MPI's
   * MPI_Comm_split_type crashed on it before xrt checked). */
  MPI_Comm half, inter;
  assert_int_equal(MPI_Comm_split(MPI_COMM_WORLD, me.rank % 2, me.rank,
                                  &half), MPI_SUCCESS);
  assert_int_equal(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD,
                                        me.rank % 2 ? 0 : 1, 77, &inter),
                   MPI_SUCCESS);
  o.comm = &inter;
  me_init_fails(&o, XRT_INVALID_ARGUMENT,
                "xrt_mpi_init: options.comm is an intercommunicator");
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

/* Topologies the communicator contradicts, given or from the
 * environment: refused in every process, and xrt_mpi_init may be tried
 * again. */
static void test_bad_topology(void **state) {
  (void)state;
  char want[256];
  xrt_mpi_options o;

  xrt_mpi_options_init(&o);
  o.topology.process_count = me.np + 1;
  snprintf(want, sizeof want, "topology.process_count is %d, but the "
           "communicator has %d processes", me.np + 1, me.np);
  me_init_fails(&o, XRT_INVALID_ARGUMENT, want);

  xrt_mpi_options_init(&o);
  o.topology.process_index = me.np;
  snprintf(want, sizeof want, "topology.process_index %d is outside 0..%d",
           me.np, me.np - 1);
  me_init_fails(&o, XRT_INVALID_ARGUMENT, want);

  xrt_mpi_options_init(&o);
  o.topology.local_rank = 3;
  o.topology.local_world_size = 0;
  me_init_fails(&o, XRT_INVALID_ARGUMENT,
                "topology.local_rank 3 is outside 0..-1");

  xrt_mpi_options_init(&o);
  o.topology.local_rank = 2;
  o.topology.local_world_size = 2;
  me_init_fails(&o, XRT_INVALID_ARGUMENT,
                "topology.local_rank 2 is outside 0..1");

  /* Every process claims index 0: ranks 0 and 1 clash first. */
  xrt_mpi_options_init(&o);
  o.topology.process_index = 0;
  me_init_fails(&o, XRT_INVALID_ARGUMENT,
                "ranks 0 and 1 both have process_index 0");

  /* Environment variables that are not counts. */
  static const char *const bad[] = {"abc", "-3", "16777217", "4x"};
  xrt_mpi_options_init(&o);
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("RANK", bad[i], 1);
    snprintf(want, sizeof want, "topology.process_index: environment "
             "variable RANK='%s' is not a count", bad[i]);
    me_init_fails(&o, XRT_INVALID_ARGUMENT, want);
  }
  me_clear_env();
  /* Each field's variables (the third host variable when the first two
   * are unset or empty). */
  static const char *const field[][2] = {
      {"WORLD_SIZE", "process_count"}, {"NODE_RANK", "host_index"},
      {"LOCAL_RANK", "local_rank"}, {"LOCAL_WORLD_SIZE", "local_world_size"}};
  for (size_t i = 0; i < sizeof field / sizeof *field; i++) {
    setenv("GROUP_RANK", "", 1);
    setenv(field[i][0], "x", 1);
    snprintf(want, sizeof want, "topology.%s: environment variable %s='x' "
             "is not a count", field[i][1], field[i][0]);
    me_init_fails(&o, XRT_INVALID_ARGUMENT, want);
    me_clear_env();
  }
  setenv("LOCAL_WORLD_SIZE", "0", 1);
  setenv("LOCAL_RANK", "0", 1);
  me_init_fails(&o, XRT_INVALID_ARGUMENT,
                "topology.local_rank 0 is outside 0..-1");
  me_clear_env();
}

/* A communicator of this process alone (options.comm), initialized
 * twice, its timeout changed, finalized twice.  The program started MPI,
 * so MPI keeps running. */
static void test_comm_self(void **state) {
  (void)state;
  xrt_mpi_options o;
  xrt_mpi_options_init(&o);
  MPI_Comm self = MPI_COMM_SELF;
  o.comm = &self;
  o.timeout_ms = 0;
  assert_int_equal(xrt_mpi_init(&o), XRT_OK);
  xrt_topology t;
  assert_int_equal(xrt_mpi_topology(&t), XRT_OK);
  assert_int_equal(t.process_index, 0);
  assert_int_equal(t.process_count, 1);
  assert_int_equal(t.host_index, 0);
  assert_int_equal(t.local_rank, 0);
  assert_int_equal(t.local_world_size, 1);
  assert_int_equal(xrt_mpi_init(&o), XRT_FAILED_PRECONDITION);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_mpi_init: already initialized");
  assert_int_equal(xrt_mpi_init(NULL), XRT_FAILED_PRECONDITION);
  assert_int_equal(xrt_mpi_set_timeout(-1), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_mpi_set_timeout: timeout_ms is -1");
  assert_int_equal(xrt_mpi_set_timeout(0), XRT_OK);
  assert_int_equal(xrt_mpi_finalize(), XRT_OK);
  assert_int_equal(xrt_mpi_finalize(), XRT_FAILED_PRECONDITION);
  int fin = 1;
  MPI_Finalized(&fin);
  assert_int_equal(fin, 0);
}

/* The transport's exchange as a plugin calls it (tag, lists); err gets
 * the message. */
static xrt_status me_xchg(uint64_t tag, const xrt_transport_msg *s, int ns,
                          const xrt_transport_msg *r, int nr,
                          xrt_plugin_error *err) {
  memset(err, 0, sizeof *err);
  return me.host->exchange(me.host->ctx, tag, s, ns, r, nr, err);
}

/* xrt_mpi_init over MPI_COMM_WORLD with ranks reversed by RANK (and the
 * host from GROUP_RANK; XRT_HOST_INDEX empty counts as unset); a client
 * of the wrapped sim plugin joins, and the transport's exchange is
 * driven directly. */
static void test_permuted_transport(void **state) {
  (void)state;
  char v[32];
  int idx = me.np - 1 - me.rank;
  snprintf(v, sizeof v, "%d", idx);
  setenv("RANK", v, 1);
  snprintf(v, sizeof v, "%d", me.np);
  setenv("WORLD_SIZE", v, 1);
  setenv("XRT_HOST_INDEX", "", 1);
  setenv("GROUP_RANK", "0", 1);
  xrt_mpi_options o;
  xrt_mpi_options_init(&o);
  o.timeout_ms = TM_TIMEOUT_MS;
  assert_int_equal(xrt_mpi_init(&o), XRT_OK);
  me_clear_env();
  xrt_topology t;
  assert_int_equal(xrt_mpi_topology(&t), XRT_OK);
  assert_int_equal(t.process_index, idx);
  assert_int_equal(t.process_count, me.np);
  assert_int_equal(t.host_index, 0);

  xrt_context *ctx = tu_context(false);
  assert_int_equal(xrt_context_register_plugin(ctx, "edge", &me.table, NULL),
                   XRT_OK);
  xrt_client_options co = tm_client_options(1, 0);
  co.context = ctx;
  co.plugin = "edge";
  xrt_client *c = NULL;
  me.host = NULL;
  assert_int_equal(xrt_client_create(&co, &c), XRT_OK);
  assert_non_null(me.host);
  assert_non_null(me.host->exchange);
  assert_int_equal(me.host->process_index, idx);
  assert_int_equal(me.host->process_count, me.np);

  /* Process p is MPI rank np-1-p: gathered in process order. */
  int32_t mine = me.rank, all[ME_MAXP];
  assert_int_equal(xrt_client_process_allgather(c, &mine, all, sizeof mine),
                   XRT_OK);
  for (int p = 0; p < me.np; p++) assert_int_equal(all[p], me.np - 1 - p);

  /* A ring through the core: from the previous process, to the next. */
  int64_t out = 1000 + idx, in = -1;
  xrt_transport_msg s1 = {(idx + 1) % me.np, &out, sizeof out};
  xrt_transport_msg r1 = {(idx + me.np - 1) % me.np, &in, sizeof in};
  assert_int_equal(xrt_client_process_exchange(c, 7, &s1, 1, &r1, 1), XRT_OK);
  assert_int_equal(in, 1000 + (idx + me.np - 1) % me.np);

  /* Bad message lists, which the core's own calls never pass. */
  xrt_plugin_error err;
  char buf[16] = {0};
  xrt_transport_msg ok = {idx, buf, 4};
  assert_int_equal(me_xchg(1, &ok, -1, NULL, 0, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "exchange: bad message lists");
  assert_int_equal(me_xchg(1, NULL, 0, &ok, -2, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "exchange: bad message lists");
  assert_int_equal(me_xchg(1, NULL, 1, NULL, 0, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "exchange: bad message lists");
  assert_int_equal(me_xchg(1, NULL, 0, NULL, 1, &err), XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "exchange: bad message lists");
  char want[128];
  xrt_transport_msg far = {me.np, buf, 4};
  assert_int_equal(me_xchg(1, &far, 1, NULL, 0, &err), XRT_INVALID_ARGUMENT);
  snprintf(want, sizeof want, "exchange: send 0 goes to process %d, outside "
           "0..%d", me.np, me.np - 1);
  TU_ASSERT_CONTAINS(err.message, want);
  xrt_transport_msg neg[2] = {{idx, buf, 4}, {-1, buf, 4}};
  assert_int_equal(me_xchg(1, &ok, 1, neg, 2, &err), XRT_INVALID_ARGUMENT);
  snprintf(want, sizeof want, "exchange: receive 1 goes to process -1, "
           "outside 0..%d", me.np - 1);
  TU_ASSERT_CONTAINS(err.message, want);
  xrt_transport_msg nodata = {idx, NULL, 4};
  assert_int_equal(me_xchg(1, &nodata, 1, NULL, 0, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "exchange: send 0 has no data");
  assert_int_equal(me_xchg(1, NULL, 0, &nodata, 1, &err),
                   XRT_INVALID_ARGUMENT);
  TU_ASSERT_CONTAINS(err.message, "exchange: receive 0 has no data");
  assert_int_equal(me_xchg(1, NULL, 0, NULL, 0, &err), XRT_OK);
  /* Without room for a message (a plugin passing no err). */
  assert_int_equal(me.host->exchange(me.host->ctx, 1, NULL, -1, NULL, 0, NULL),
                   XRT_INVALID_ARGUMENT);

  /* More messages than the stack holds (40 + 40 > 64), to this process
   * itself; a zero-byte one without data among them. */
  enum { N = 40 };
  int32_t snd[N], rcv[N];
  xrt_transport_msg sm[N], rm[N];
  for (int i = 0; i < N; i++) {
    snd[i] = 100 * i + idx;
    rcv[i] = -1;
    sm[i] = (xrt_transport_msg){idx, &snd[i], sizeof snd[i]};
    rm[i] = (xrt_transport_msg){idx, &rcv[i], sizeof rcv[i]};
  }
  sm[N - 1] = rm[N - 1] = (xrt_transport_msg){idx, NULL, 0};
  assert_int_equal(me_xchg(2, sm, N, rm, N, &err), XRT_OK);
  for (int i = 0; i < N - 1; i++) assert_int_equal(rcv[i], 100 * i + idx);
  assert_int_equal(rcv[N - 1], -1);

  /* A receive MPI fails: 16 bytes sent to the next process, room for 8
   * from the previous one (Open MPI reports the truncation between
   * processes, not in a message to self). */
  char s16[16] = "0123456789abcdef", r8[8] = {0};
  xrt_transport_msg ts = {(idx + 1) % me.np, s16, sizeof s16};
  xrt_transport_msg tr = {(idx + me.np - 1) % me.np, r8, sizeof r8};
  /* The send alone first (16 bytes go eagerly): nothing is left to
   * abandon when the receive fails. */
  assert_int_equal(xrt_client_process_exchange(c, 9, &ts, 1, NULL, 0), XRT_OK);
  assert_int_equal(xrt_client_process_exchange(c, 9, NULL, 0, &tr, 1),
                   XRT_UNAVAILABLE);
  TU_ASSERT_CONTAINS(xrt_last_error(), "xrt_client_process_exchange: "
                     "exchange failed: MPI_ERR_");
  TU_ASSERT_CONTAINS(xrt_last_error(), "(MPI error ");
  MPI_Barrier(MPI_COMM_WORLD);

  /* Waits that time out: receives from this process, which sends none.
   * 300 ms is long enough to go from polling to yielding to sleeping. */
  assert_int_equal(xrt_mpi_set_timeout(300), XRT_OK);
  int32_t r2[2];
  xrt_transport_msg one = {idx, &r2[0], 4};
  assert_int_equal(me_xchg(4, NULL, 0, &one, 1, &err),
                   XRT_DEADLINE_EXCEEDED);
  snprintf(want, sizeof want, "exchange: process %d did not answer within "
           "300 ms (dead or stalled?)", idx);
  TU_ASSERT_CONTAINS(err.message, want);
  assert_int_equal(xrt_mpi_set_timeout(50), XRT_OK);
  /* One send and two receives: the second receive waits in vain. */
  int32_t s1v = 5 + idx;
  xrt_transport_msg s1m = {idx, &s1v, 4};
  xrt_transport_msg two[2] = {{idx, &r2[0], 4}, {idx, &r2[1], 4}};
  assert_int_equal(me_xchg(5, &s1m, 1, two, 2, &err), XRT_DEADLINE_EXCEEDED);
  TU_ASSERT_CONTAINS(err.message, "exchange: the other processes did not "
                     "answer within 50 ms (dead or stalled?)");
  /* More than one MPI piece: 1 GiB + 1 byte, never touched (no sender). */
  size_t big = ((size_t)1 << 30) + 1;
  char *huge = (char *)malloc(big);
  assert_non_null(huge);
  xrt_transport_msg hm = {idx, huge, big};
  assert_int_equal(me_xchg(6, NULL, 0, &hm, 1, &err), XRT_DEADLINE_EXCEEDED);
  snprintf(want, sizeof want, "exchange: process %d did not answer within "
           "50 ms", idx);
  TU_ASSERT_CONTAINS(err.message, want);
  free(huge);

  /* Timeout 0: never gives up.  Process 0 sends its ring message 50 ms
   * late, so process 1 waits without a deadline; then an exchange that
   * completes at once. */
  assert_int_equal(xrt_mpi_set_timeout(0), XRT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  if (idx == 0) nanosleep(&(struct timespec){0, 50000000}, NULL);
  out = 2000 + idx;
  in = -1;
  assert_int_equal(xrt_client_process_exchange(c, 10, &s1, 1, &r1, 1), XRT_OK);
  assert_int_equal(in, 2000 + (idx + me.np - 1) % me.np);
  int32_t a = 42 + idx, b = 0;
  xrt_transport_msg as = {idx, &a, 4}, br = {idx, &b, 4};
  assert_int_equal(me_xchg(8, &as, 1, &br, 1, &err), XRT_OK);
  assert_int_equal(b, 42 + idx);
  assert_int_equal(xrt_mpi_set_timeout(TM_TIMEOUT_MS), XRT_OK);

  xrt_client_release(c);

  /* A client that process 0 does not create: the others' join (an
   * allgather of device counts) gives up.  MPI cannot cancel a collective
   * (Open MPI aborted the job when xrt tried): it stays posted, and xrt's
   * communicator serves nothing more. */
  assert_int_equal(xrt_mpi_set_timeout(200), XRT_OK);
  if (idx != 0) {
    xrt_client *c2 = NULL;
    assert_int_equal(xrt_client_create(&co, &c2), XRT_DEADLINE_EXCEEDED);
    TU_ASSERT_CONTAINS(xrt_last_error(), "allgather: the other processes did "
                       "not answer within 200 ms (dead or stalled?)");
    assert_null(c2);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  assert_int_equal(xrt_context_release(ctx), XRT_OK);
  assert_int_equal(xrt_mpi_finalize(), XRT_OK);
  /* The program started MPI: xrt leaves it running. */
  int fin = 1;
  MPI_Finalized(&fin);
  assert_int_equal(fin, 0);
}

/* Once the program finalized MPI, xrt_mpi_init refuses. */
static void test_after_mpi_finalize(void **state) {
  (void)state;
  assert_int_equal(MPI_Finalize(), MPI_SUCCESS);
  me_init_fails(NULL, XRT_FAILED_PRECONDITION, "MPI was finalized");
}

int main(void) {
  int provided = 0;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) !=
          MPI_SUCCESS ||
      provided < MPI_THREAD_SERIALIZED) {
    fprintf(stderr, "MPI_Init_thread: no MPI_THREAD_SERIALIZED\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &me.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &me.np);
  if (me.np < 2 || me.np > ME_MAXP) {
    fprintf(stderr, "2 to %d processes\n", ME_MAXP);
    MPI_Finalize();
    return 1;
  }
  me_clear_env();
  me.table = *xrt_sim_plugin_api();
  me.table.name = "edge";
  me.table.client_create = me_client_create;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_before_init),
      cmocka_unit_test(test_bad_options),
      cmocka_unit_test(test_bad_topology),
      cmocka_unit_test(test_comm_self),
      cmocka_unit_test(test_permuted_transport),
      cmocka_unit_test(test_after_mpi_finalize),
  };
  return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
