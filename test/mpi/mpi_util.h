/*
 * mpi_util.h - scaffolding shared by the tests of test/mpi/ (run under
 * mpirun): joining the multi-process system, leaving it, and a
 * collective that some processes skip on purpose.
 *
 * Setup failures exit(1) instead of failing a test: with one process
 * stuck in setup the others would wait in their first collective until
 * the timeout, so the whole launch is better stopped at once.
 */
#ifndef XRT_TEST_MPI_UTIL_H
#define XRT_TEST_MPI_UTIL_H

#include <mpi.h>

#include "../test_util.h"

#define TM_TIMEOUT_MS 120000 /* generous: sanitizers and loaded machines */
#define TM_STALL_MS 1500     /* a skipped collective's short timeout */

typedef struct tm_world {
  int me, np;         /* process index, processes */
  xrt_client *client; /* joined (tm_join), else NULL */
} tm_world;

/* The client tm_join made, which tm_teardown releases (one a program). */
static xrt_client *tm_joined;

static inline void tm_die(const char *what) {
  fprintf(stderr, "%s: %s\n", what, xrt_last_error());
  exit(1);
}

/* xrt_mpi_init with TM_TIMEOUT_MS; exits when np processes of `devices`
 * devices each would exceed max_devices (the tests' fixed arrays). */
static inline tm_world tm_init(int devices, int max_devices) {
  xrt_mpi_options mo;
  xrt_mpi_options_init(&mo);
  mo.timeout_ms = TM_TIMEOUT_MS;
  if (xrt_mpi_init(&mo)) tm_die("xrt_mpi_init");
  xrt_topology t;
  xrt_mpi_topology(&t);
  tm_world w = {t.process_index, t.process_count, NULL};
  if (w.np * devices > max_devices) {
    fprintf(stderr, "at most %d processes\n", max_devices / devices);
    exit(1);
  }
  return w;
}

/* Options of a client joining the system with `devices` devices here,
 * one thread each; memory_bytes 0 keeps the default device memory. */
static inline xrt_client_options tm_client_options(int devices,
                                                   uint64_t memory_bytes) {
  xrt_client_options co;
  xrt_client_options_init(&co);
  co.num_devices = devices;
  if (memory_bytes) co.device_memory_bytes = memory_bytes;
  co.threads_per_device = 1;
  return co;
}

/* tm_init, then w.client joined with tm_client_options(devices,
 * memory_bytes). */
static inline tm_world tm_join(int devices, int max_devices,
                               uint64_t memory_bytes) {
  tm_world w = tm_init(devices, max_devices);
  xrt_client_options co = tm_client_options(devices, memory_bytes);
  if (xrt_client_create(&co, &w.client)) tm_die("joined client");
  tm_joined = w.client;
  return w;
}

/* A cmocka group teardown: releases tm_join's client (if any) and
 * finalizes.  Every process must get here: a failure elsewhere shows in
 * the exit code of the process that failed. */
static inline int tm_teardown(void **state) {
  (void)state;
  xrt_client_release(tm_joined);
  tm_joined = NULL;
  return xrt_mpi_finalize() ? -1 : 0;
}

/* A collective skipped on purpose: the processes that make it call
 * tm_stall_begin, so that they wait TM_STALL_MS instead of the whole
 * timeout, and pass the collective's result to tm_stall_end, which
 * wants DEADLINE_EXCEEDED (and `message` in the error unless NULL) and
 * puts the timeout back.  Then every process meets at a barrier. */
static inline void tm_stall_begin(void) {
  assert_int_equal(xrt_mpi_set_timeout(TM_STALL_MS), XRT_OK);
}

static inline void tm_stall_end(xrt_status got, const char *message) {
  assert_int_equal(got, XRT_DEADLINE_EXCEEDED);
  if (message) TU_ASSERT_CONTAINS(xrt_last_error(), message);
  assert_int_equal(xrt_mpi_set_timeout(TM_TIMEOUT_MS), XRT_OK);
}

#endif /* XRT_TEST_MPI_UTIL_H */
