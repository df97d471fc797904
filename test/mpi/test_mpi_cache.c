/*
 * test_mpi_cache.c - a persistent compile cache shared by the processes
 * of a multi-process client (issues #7 and #11), run by `make test-mpi`
 * under mpirun with 2 and 4 processes.
 *
 * Every process opens the same disk cache directory (process 0 makes it
 * and broadcasts its name).  A first client per process compiles two
 * programs whose launches span every process (an all_reduce over all
 * devices, and a collective_permute on a device assignment in reverse
 * order): the key is the same in every process, process 0 writes each
 * executable and its alias and the others write nothing (files counted,
 * the caches' counters, their "not written" log lines).  A second client
 * per process then loads both from disk, no compile, and runs them with
 * results checked against loops written here: what process 0 wrote runs
 * correctly in every process.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <dirent.h>
#include <stdatomic.h>

#include "mpi_util.h"

#define MC_D 2      /* devices per process */
#define MC_MAXP 64  /* participants */

static struct {
  int me, n;                /* process index, processes */
  char dir[64];             /* the shared cache directory */
  xrt_disk_cache *cache;    /* this process's view of it */
  const xrt_cache_store *store;
} mc;

/* Log lines of component "cache" saying a process did not write. */
static atomic_int not_written;

static void count_log(void *user, xrt_log_level level, const char *component,
                      const char *message) {
  (void)user, (void)level;
  if (strcmp(component, "cache") == 0 && strstr(message, "not written"))
    atomic_fetch_add(&not_written, 1);
}

/* Files of the cache directory ("." and ".." aside). */
static int count_files(void) {
  DIR *d = opendir(mc.dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static xrt_client *mc_client(void) {
  xrt_client_options co = tm_client_options(MC_D, (uint64_t)64 << 20);
  co.cache_store = mc.store;
  xrt_client *c = NULL;
  if (xrt_client_create(&co, &c)) fail_msg("client: %s", xrt_last_error());
  return c;
}

/* ---- the programs ---- */

/* An all_reduce (sum) of 3 x i32 over all n = N * MC_D devices. */
static void all_reduce_src(char *src, size_t cap, int n) {
  char ids[512];
  size_t o = 0;
  for (int p = 0; p < n; p++)
    o += (size_t)snprintf(ids + o, sizeof ids - o, "%s%d", p ? ", " : "", p);
  snprintf(src, cap,
           "module @ar attributes {mhlo.num_replicas = %d : i32} {\n"
           "func.func @main(%%a: tensor<3xi32>) -> tensor<3xi32> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%a) ({\n"
           "    ^bb0(%%x: tensor<i32>, %%y: tensor<i32>):\n"
           "      %%s = stablehlo.add %%x, %%y : tensor<i32>\n"
           "      stablehlo.return %%s : tensor<i32>\n"
           "  }) {replica_groups = dense<[[%s]]> : tensor<1x%dxi64>}\n"
           "    : (tensor<3xi32>) -> tensor<3xi32>\n"
           "  return %%r : tensor<3xi32>\n"
           "}\n}\n",
           n, ids, n);
}

/* Logical id q sends to q + 1 (mod n). */
static void permute_src(char *src, size_t cap, int n) {
  char pairs[1024];
  size_t o = (size_t)snprintf(pairs, sizeof pairs, "dense<[");
  for (int q = 0; q < n; q++)
    o += (size_t)snprintf(pairs + o, sizeof pairs - o, "%s[%d, %d]",
                          q ? ", " : "", q, (q + 1) % n);
  snprintf(pairs + o, sizeof pairs - o, "]> : tensor<%dx2xi64>", n);
  snprintf(src, cap,
           "module @perm {\n"
           "func.func @main(%%a: tensor<3xi32>) -> tensor<3xi32> {\n"
           "  %%r = \"stablehlo.collective_permute\"(%%a) "
           "{source_target_pairs = %s} : (tensor<3xi32>) -> tensor<3xi32>\n"
           "  return %%r : tensor<3xi32>\n"
           "}\n}\n",
           pairs);
}

/* Compiles src on c (options o) and runs it with participant p's input
 * in[p]; checks this process's participants against want[p]. */
static void run_check(xrt_client *c, const char *src,
                      const xrt_compile_options *o, int n,
                      int32_t in[][3], int32_t want[][3]) {
  xrt_executable *exe = NULL;
  if (xrt_compile(c, src, strlen(src), o, &exe))
    fail_msg("compile: %s", xrt_last_error());
  assert_int_equal(xrt_executable_num_replicas(exe) *
                       xrt_executable_num_partitions(exe), n);
  xrt_buffer *args[MC_MAXP] = {0}, *outs[MC_MAXP] = {0};
  xrt_buffer *const *lists[MC_MAXP];
  xrt_buffer **olists[MC_MAXP];
  int ran[MC_MAXP], mine = 0;
  xrt_shape sh = TU_SHAPE(XRT_S32, 3);
  for (int p = 0; p < n; p++) {
    xrt_device *d = xrt_executable_device(exe, p);
    assert_non_null(d);
    int g = o && o->device_assignment ? o->device_assignment[p] : p;
    assert_int_equal(xrt_device_global_id(d), g);
    ran[p] = xrt_device_is_addressable(d) == 1;
    assert_int_equal(ran[p], g / MC_D == mc.me);
    mine += ran[p];
    lists[p] = ran[p] ? &args[p] : NULL;
    olists[p] = ran[p] ? &outs[p] : NULL;
    if (ran[p])
      assert_int_equal(xrt_buffer_from_host(c, d, &sh, in[p], &args[p]),
                       XRT_OK);
  }
  assert_int_equal(mine, MC_D);
  xrt_event *done = NULL;
  xrt_status s = xrt_execute_multi(exe, lists, n, 1, olists, 1, NULL, &done);
  if (!s) {
    s = xrt_event_await(done);
    xrt_event_release(done);
  }
  if (s) fail_msg("run: %s", xrt_last_error());
  for (int p = 0; p < n; p++) {
    if (ran[p]) {
      int32_t got[3];
      assert_int_equal(xrt_buffer_to_host(outs[p], got, sizeof got), XRT_OK);
      assert_memory_equal(got, want[p], sizeof got);
    }
    xrt_buffer_release(args[p]);
    xrt_buffer_release(outs[p]);
  }
  xrt_executable_release(exe);
}

/* The programs' sources and options. */
typedef struct mc_progs {
  char all_reduce[4096], permute[4096];
  int assign[MC_MAXP];
  xrt_compile_options o; /* the permute's */
} mc_progs;

static void mc_progs_init(mc_progs *m) {
  int n = mc.n * MC_D;
  all_reduce_src(m->all_reduce, sizeof m->all_reduce, n);
  permute_src(m->permute, sizeof m->permute, n);
  /* Logical p on global device n - 1 - p: its process is not p's. */
  for (int p = 0; p < n; p++) m->assign[p] = n - 1 - p;
  xrt_compile_options_init(&m->o);
  m->o.num_replicas = n;
  m->o.num_partitions = 1;
  m->o.device_assignment = m->assign;
}

/* Compiles both programs on c (no run: that is collective). */
static void compile_both(xrt_client *c) {
  mc_progs m;
  mc_progs_init(&m);
  xrt_executable *e = NULL;
  if (xrt_compile(c, m.all_reduce, strlen(m.all_reduce), NULL, &e))
    fail_msg("compile: %s", xrt_last_error());
  xrt_executable_release(e);
  if (xrt_compile(c, m.permute, strlen(m.permute), &m.o, &e))
    fail_msg("compile: %s", xrt_last_error());
  xrt_executable_release(e);
}

/* Both programs on c, results checked against loops here. */
static void run_both(xrt_client *c) {
  int n = mc.n * MC_D;
  mc_progs m;
  mc_progs_init(&m);
  int32_t in[MC_MAXP][3], want[MC_MAXP][3];
  for (int p = 0; p < n; p++)
    for (int i = 0; i < 3; i++) in[p][i] = 100 * p + 7 * i - 5;
  for (int i = 0; i < 3; i++) {
    int32_t sum = 0;
    for (int p = 0; p < n; p++) sum += in[p][i];
    for (int p = 0; p < n; p++) want[p][i] = sum;
  }
  run_check(c, m.all_reduce, NULL, n, in, want);
  for (int p = 0; p < n; p++)
    memcpy(want[p], in[(p - 1 + n) % n], sizeof want[p]);
  run_check(c, m.permute, &m.o, n, in, want);
}

static xrt_cache_stats cache_stats(xrt_client *c) {
  xrt_cache_stats s;
  assert_int_equal(xrt_client_get_cache_stats(c, &s), XRT_OK);
  return s;
}

static xrt_disk_cache_stats disk_stats(void) {
  xrt_disk_cache_stats s;
  assert_int_equal(xrt_disk_cache_get_stats(mc.cache, &s), XRT_OK);
  return s;
}

static uint64_t compiles(xrt_client *c) {
  xrt_client_stats s;
  assert_int_equal(xrt_client_get_stats(c, &s), XRT_OK);
  return s.compiles;
}

/* ---- tests ---- */

/* The key is the same in every process, and differs from a client of
 * one process with as many devices. */
static void test_key_alike_in_every_process(void **state) {
  (void)state;
  xrt_client *c = mc_client();
  int n = mc.n * MC_D;
  char src[4096], key[XRT_CACHE_KEY_CHARS + 1];
  all_reduce_src(src, sizeof src, n);
  assert_int_equal(xrt_compile_cache_key(c, src, strlen(src), NULL, key),
                   XRT_OK);
  char *all = calloc((size_t)mc.n, sizeof key);
  assert_non_null(all);
  assert_int_equal(xrt_client_process_allgather(c, key, all, sizeof key),
                   XRT_OK);
  for (int p = 0; p < mc.n; p++)
    assert_string_equal(all + (size_t)p * sizeof key, key);
  free(all);
  xrt_client_options co;
  xrt_client_options_init(&co);
  co.num_devices = n;
  co.topology.process_index = 0;
  co.topology.process_count = 1;
  xrt_client *alone = NULL;
  assert_int_equal(xrt_client_create(&co, &alone), XRT_OK);
  char key1[XRT_CACHE_KEY_CHARS + 1];
  assert_int_equal(xrt_compile_cache_key(alone, src, strlen(src), NULL,
                                         key1), XRT_OK);
  assert_string_not_equal(key, key1);
  xrt_client_release(alone);
  xrt_client_release(c);
}

/* First clients: the other processes compile first and write nothing,
 * then process 0 compiles and writes; then all run (from memory). */
static void test_process_zero_writes(void **state) {
  (void)state;
  assert_int_equal(count_files(), 0);
  atomic_store(&not_written, 0);
  assert_int_equal(xrt_log_configure("info,cache"), XRT_OK);
  xrt_client *c = mc_client();
  if (mc.me != 0) compile_both(c);
  MPI_Barrier(MPI_COMM_WORLD);
  assert_int_equal(count_files(), 0); /* theirs: not written */
  MPI_Barrier(MPI_COMM_WORLD);
  if (mc.me == 0) compile_both(c);
  MPI_Barrier(MPI_COMM_WORLD);
  assert_int_equal(count_files(), 4); /* executables and aliases */
  xrt_cache_stats cs = cache_stats(c);
  assert_int_equal(compiles(c), 2);
  assert_int_equal(cs.store_misses, 2);
  assert_int_equal(cs.store_hits, 0);
  assert_int_equal(cs.store_errors, 0);
  xrt_disk_cache_stats ds = disk_stats();
  if (mc.me == 0) {
    assert_int_equal(cs.store_writes, 2);
    assert_int_equal(ds.writes, 4);
    assert_int_equal(atomic_load(&not_written), 0);
  } else {
    assert_int_equal(cs.store_writes, 0);
    assert_int_equal(ds.writes, 0);
    assert_int_equal(ds.skipped, 0); /* never offered: not even declined */
    assert_int_equal(atomic_load(&not_written), 2); /* logged, each */
  }
  run_both(c); /* from memory now */
  assert_int_equal(compiles(c), 2);
  xrt_client_release(c);

  /* Second clients: everything from disk, run correctly everywhere. */
  atomic_store(&not_written, 0);
  xrt_client *d = mc_client();
  run_both(d);
  cs = cache_stats(d);
  assert_int_equal(compiles(d), 0);
  assert_int_equal(cs.store_hits, 2);
  assert_int_equal(cs.store_errors, 0);
  assert_int_equal(cs.store_writes, 0);
  if (mc.me != 0) assert_int_equal(disk_stats().writes, 0);
  assert_int_equal(atomic_load(&not_written), 0); /* nothing to write */
  xrt_client_release(d);
  assert_int_equal(xrt_log_configure("warn"), XRT_OK);
  MPI_Barrier(MPI_COMM_WORLD);
  assert_int_equal(count_files(), 4);
}

/* ---- main ---- */

static void remove_tree(const char *dir) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static int mc_setup(void **state) {
  (void)state;
  tm_world w = tm_init(MC_D, MC_MAXP);
  mc.me = w.me;
  mc.n = w.np;
  if (mc.me == 0) {
    snprintf(mc.dir, sizeof mc.dir, "/tmp/xrt_test_mpc_XXXXXX");
    if (!mkdtemp(mc.dir)) mc.dir[0] = 0;
  }
  MPI_Bcast(mc.dir, sizeof mc.dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (!mc.dir[0]) {
    fprintf(stderr, "mkdtemp failed\n");
    exit(1);
  }
  xrt_disk_cache_options o;
  xrt_disk_cache_options_init(&o);
  o.directory = mc.dir;
  if (xrt_disk_cache_open(&o, &mc.cache)) tm_die("disk cache");
  mc.store = xrt_disk_cache_store(mc.cache);
  xrt_log_set_callback(count_log, NULL);
  return 0;
}

static int mc_teardown(void **state) {
  xrt_log_set_callback(NULL, NULL);
  xrt_disk_cache_close(mc.cache);
  MPI_Barrier(MPI_COMM_WORLD); /* everyone is done with the directory */
  if (mc.me == 0) remove_tree(mc.dir);
  return tm_teardown(state); /* no joined client: the tests make theirs */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_key_alike_in_every_process),
      cmocka_unit_test(test_process_zero_writes),
  };
  return cmocka_run_group_tests(tests, mc_setup, mc_teardown) ? 1 : 0;
}
