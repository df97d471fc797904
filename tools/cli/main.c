/*
 * main.c - the xrt command-line tool's front end: usage, --mpi, the `run`
 * and `check` commands, and main().  MIT licensed; see LICENSE.
 *
 *   xrt run FILE.mlir [--devices N] [--input A.npy]... [--output-dir DIR]
 *                     [--entry NAME]
 *   xrt check FILE.mlir [--split-input-file] [--verbose]
 *   xrt print FILE [-o OUT]   (print_cmd.c)
 *   xrt bench FILE.mlir [...] (bench_cmd.c)
 *   (either with --mpi: one process of an MPI job; see "--mpi" below)
 *   xrt version | xrt --help
 *
 * The tool (this directory; cli.h lists its files) uses only the public
 * API in xrt.h, so it doubles as an example of it.
 * Exit codes: 0 success, 1 a check.* op failed, 2 anything else (bad usage,
 * a file that does not parse or compile, a runtime error).
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef XRT_HAVE_MPI
#include <mpi.h>
#include <unistd.h> /* dup, dup2: the output of processes but 0 */
#endif

/* Platform: the tool's one OS difference, creating a directory. */
#if defined(_WIN32)
#include <direct.h>
static int os_mkdir(const char *dir) { return _mkdir(dir); }
#else
static int os_mkdir(const char *dir) { return mkdir(dir, 0777); }
#endif

enum { EXIT_PASS = CLI_EXIT_PASS, EXIT_CHECK = CLI_EXIT_CHECK, EXIT_ERROR = CLI_EXIT_ERROR };

static const char usage_text[] =
    "usage: xrt <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE.mlir      compile the entry function, run it on a simulated\n"
    "                     client and print its results\n"
    "      --devices N        run it replicated on N devices (num_replicas = N\n"
    "                         over the program's partitions; default 1) and print\n"
    "                         each device's results after a 'device D:' line\n"
    "      --input A.npy      an argument of the entry function; repeat once\n"
    "                         per argument, in order\n"
    "      --output-dir DIR   also write result K to DIR/result_K.npy\n"
    "                         (DIR/device_D_result_K.npy with several devices)\n"
    "      --entry NAME       function to run (default: main, or the only one)\n"
    "      --cache-dir DIR    keep compiled executables in DIR and reuse them\n"
    "                         (default: $XRT_CACHE_DIR when set)\n"
    "  check FILE.mlir    run every check.* op of the file's test functions;\n"
    "                     with a '// RUN: ... --interpret ... | FileCheck %s'\n"
    "                     line, also print the results as the StableHLO\n"
    "                     interpreter does (with that line's --args=\"[...]\"\n"
    "                     as arguments) and match the '// CHECK:' lines\n"
    "      --split-input-file split at lines '// -----' and run each chunk\n"
    "      --verbose          also list the chunks that pass\n"
    "      --cache-dir DIR    as for run\n"
    "  run and check also take\n"
    "      --mpi              be one process of an MPI job (mpirun; xrt built\n"
    "                         with XRT_MPI=1): every process runs the whole\n"
    "                         program, interpreter.run_parallel spreads its\n"
    "                         participants over the processes; process 0\n"
    "                         prints, and all exit with the worst status\n"
    "  print FILE         write the program as StableHLO text in one canonical\n"
    "                     form: generic ops, attributes sorted by name, exact\n"
    "                     numbers, no locations (two files of one program print\n"
    "                     the same)\n"
    "      -o OUT             write it to OUT instead of stdout\n"
    "  bench FILE.mlir    compile the entry function and time its calls: prints\n"
    "                     the compile time, min / median / p90 / mean latency\n"
    "                     per call, throughput (calls/s) and peak memory\n"
    "      --input A.npy      an argument, as for run (repeat per argument)\n"
    "      --inputs KIND      or generated arguments: random (floats uniform in\n"
    "                         [-1, 1), integers in [0, 16); the default) or zeros\n"
    "      --iterations N     timed calls (default 10)\n"
    "      --warmup N         untimed calls first (default 2; 0 for none)\n"
    "      --threads T        threads per simulated device (default: the cores\n"
    "                         divided by the devices)\n"
    "      --devices N        run it replicated on N devices, one launch per call\n"
    "      --entry NAME       as for run\n"
    "      --json             print one JSON object instead\n"
    "  version            print the version\n"
    "  help, --help       print this message\n"
    "\n"
    "exit status: 0 success, 1 a check failed, 2 any other error\n";

static int usage_error(const char *fmt, const char *arg) {
  fputs("xrt: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n\n", stderr);
  fputs(usage_text, stderr);
  return EXIT_ERROR;
}

/* ---- --mpi: one process of an MPI job ----
 *
 * Every process runs the whole program on a client of its own; only
 * interpreter.run_parallel spans the processes (see run_parallel.c).
 * Process 0 prints; the others keep their output and show it only when
 * their own status differs from process 0's, and every process exits with
 * the worst status of all, so that a failure anywhere fails the job
 * everywhere. */

cli_mpi_state cli_mpi_job;

#ifdef XRT_HAVE_MPI
static struct {
  FILE *kept;          /* processes but 0: their stdout and stderr */
  int out_fd, err_fd;  /* the real ones, while kept */
} mpi_out;
#endif

/* Removes "--mpi" from argv (after the command); whether it was there. */
static int take_mpi_flag(int *argc, char **argv) {
  int found = 0, k = 2;
  for (int i = 2; i < *argc; i++) {
    if (strcmp(argv[i], "--mpi") == 0) found = 1;
    else argv[k++] = argv[i];
  }
  *argc = k;
  return found;
}

#ifdef XRT_HAVE_MPI
/* Sends this process's stdout and stderr to a temporary file. */
static void mpi_keep_output(void) {
  fflush(stdout);
  fflush(stderr);
  mpi_out.kept = tmpfile();
  if (!mpi_out.kept) return; /* then it prints, which is only noisy */
  mpi_out.out_fd = dup(1);
  mpi_out.err_fd = dup(2);
  dup2(fileno(mpi_out.kept), 1);
  dup2(fileno(mpi_out.kept), 2);
}

/* Restores stdout and stderr; shows what was kept when asked to. */
static void mpi_release_output(int show) {
  if (!mpi_out.kept) return;
  fflush(stdout);
  fflush(stderr);
  dup2(mpi_out.out_fd, 1);
  dup2(mpi_out.err_fd, 2);
  close(mpi_out.out_fd);
  close(mpi_out.err_fd);
  if (show) {
    fprintf(stderr, "xrt: process %d of %d:\n", cli_mpi_job.me, cli_mpi_job.nproc);
    rewind(mpi_out.kept);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, mpi_out.kept)) > 0)
      fwrite(buf, 1, n, stderr);
    fflush(stderr);
  }
  fclose(mpi_out.kept);
  mpi_out.kept = NULL;
}
#endif

/* Joins the MPI job; 0 or an exit code after saying why not. */
static int mpi_begin(void) {
#ifdef XRT_HAVE_MPI
  xrt_mpi_options o;
  xrt_mpi_options_init(&o);
  xrt_status s = xrt_mpi_init(&o);
  if (s) return cli_report(s, "--mpi");
  xrt_topology t;
  if ((s = xrt_mpi_topology(&t))) {
    int rc = cli_report(s, "--mpi");
    xrt_mpi_finalize();
    return rc;
  }
  cli_mpi_job.on = 1;
  cli_mpi_job.me = t.process_index;
  cli_mpi_job.nproc = t.process_count;
  if (cli_mpi_job.me) mpi_keep_output();
  return 0;
#else
  return usage_error("%s", "--mpi: this xrt was built without MPI (build it with "
                     "make XRT_MPI=1)");
#endif
}

/* Agrees on the exit status (the worst of all processes) and leaves the
 * job.  Collective. */
static int mpi_end(int rc) {
#ifdef XRT_HAVE_MPI
  int worst = rc;
  int *all = calloc((size_t)cli_mpi_job.nproc, sizeof *all);
  if (all && MPI_Allgather(&rc, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS) {
    for (int p = 0; p < cli_mpi_job.nproc; p++) worst = all[p] > worst ? all[p] : worst;
  } else {
    worst = EXIT_ERROR; /* cannot tell how the others did */
  }
  if (cli_mpi_job.me) mpi_release_output(!all || rc != all[0]);
  for (int p = 1; all && cli_mpi_job.me == 0 && p < cli_mpi_job.nproc; p++)
    if (all[p] != rc)
      fprintf(stderr, "xrt: process %d of %d exits with status %d\n", p, cli_mpi_job.nproc,
              all[p]);
  free(all);
  xrt_mpi_finalize();
  cli_mpi_job.on = 0;
  return worst;
#else
  return rc;
#endif
}

/* ======================================================================
 * xrt run
 * ==================================================================== */

typedef struct run_args {
  const char *file;
  const char *entry;
  const char *output_dir;
  const char *cache_dir; /* --cache-dir, else $XRT_CACHE_DIR, else NULL */
  int devices;
  int num_inputs;
  const char **inputs; /* borrowed from argv */
} run_args;

static int parse_devices(const char *v, int *out) {
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || end == v || *end || n < 1 || n > 1024) return -1;
  *out = (int)n;
  return 0;
}

/* Returns 0, or an exit code after printing a usage error. */
static int parse_run_args(int argc, char **argv, run_args *ra) {
  memset(ra, 0, sizeof *ra);
  ra->devices = 1;
  ra->inputs = calloc((size_t)argc, sizeof *ra->inputs);
  if (!ra->inputs) return usage_error("%s", "out of memory");
  for (int i = 2; i < argc; i++) {
    const char *v = NULL;
    if (cli_option(argc, argv, &i, "--devices", &v)) {
      if (!v || parse_devices(v, &ra->devices))
        return usage_error("--devices needs a number from 1 to 1024, not '%s'", v ? v : "");
    } else if (cli_option(argc, argv, &i, "--input", &v)) {
      if (!v) return usage_error("%s needs a file", "--input");
      ra->inputs[ra->num_inputs++] = v;
    } else if (cli_option(argc, argv, &i, "--output-dir", &v)) {
      if (!v) return usage_error("%s needs a directory", "--output-dir");
      ra->output_dir = v;
    } else if (cli_option(argc, argv, &i, "--entry", &v)) {
      if (!v) return usage_error("%s needs a function name", "--entry");
      ra->entry = v;
    } else if (cli_option(argc, argv, &i, "--cache-dir", &v)) {
      if (!v || !*v) return usage_error("%s needs a directory", "--cache-dir");
      ra->cache_dir = v;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return usage_error("run: unknown option '%s'", argv[i]);
    } else if (ra->file) {
      return usage_error("run: more than one program file ('%s')", argv[i]);
    } else {
      ra->file = argv[i];
    }
  }
  if (!ra->file) return usage_error("%s: no program file given", "run");
  if (!ra->cache_dir) {
    const char *env = getenv("XRT_CACHE_DIR");
    if (env && *env) ra->cache_dir = env;
  }
  return 0;
}

/* Opens the disk cache of --cache-dir (none without one); returns 0 or an
 * exit code after reporting why. */
static int open_disk_cache(const char *dir, xrt_disk_cache **out) {
  *out = NULL;
  if (!dir) return 0;
#ifdef XRT_HAVE_DISK_CACHE
  xrt_disk_cache_options o;
  xrt_disk_cache_options_init(&o);
  o.directory = dir;
  xrt_status s = xrt_disk_cache_open(&o, out);
  return s ? cli_report(s, NULL) : 0;
#else
  fprintf(stderr, "xrt: --cache-dir %s: this xrt is built without the disk "
          "cache (XRT_DISK_CACHE=0)\n", dir);
  return EXIT_ERROR;
#endif
}

static void close_disk_cache(xrt_disk_cache *cache) {
#ifdef XRT_HAVE_DISK_CACHE
  xrt_disk_cache_close(cache);
#else
  (void)cache;
#endif
}

/* Creates dir if it does not exist (one level, like mkdir). */
static int ensure_dir(const char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    fprintf(stderr, "xrt: --output-dir %s is not a directory\n", dir);
    return -1;
  }
  if (os_mkdir(dir) != 0 && errno != EEXIST) {
    fprintf(stderr, "xrt: cannot create %s: %s\n", dir, strerror(errno));
    return -1;
  }
  return 0;
}

/* Writes DIR/result_K.npy, or DIR/device_D_result_K.npy for device D of a
 * replicated run (device >= 0). */
static int write_results(const char *dir, xrt_buffer **outs, int n, int device) {
  if (ensure_dir(dir)) return EXIT_ERROR;
  size_t cap = strlen(dir) + 64;
  char *path = malloc(cap);
  if (!path) return EXIT_ERROR;
  int rc = 0;
  for (int k = 0; k < n && !rc; k++) {
    if (device < 0) snprintf(path, cap, "%s/result_%d.npy", dir, k);
    else snprintf(path, cap, "%s/device_%d_result_%d.npy", dir, device, k);
    xrt_status s = xrt_buffer_to_npy(outs[k], path);
    if (s) rc = cli_report(s, NULL);
  }
  free(path);
  return rc;
}

/* Replicas of a run on ra->devices devices: the module's partitions
 * (mhlo.num_partitions) times the replicas fill the devices. */
static int run_replicas(const run_args *ra, const xrt_program *prog, int *replicas) {
  const xrt_ir_module *m = xrt_program_module(prog);
  int parts = m && m->num_partitions > 0 ? m->num_partitions : 1;
  if (ra->devices % parts != 0) {
    fprintf(stderr, "xrt: --devices %d is not a multiple of the program's %d partitions\n",
            ra->devices, parts);
    return EXIT_ERROR;
  }
  *replicas = ra->devices / parts;
  return 0;
}

/* Prints (and with --output-dir writes) one device's results; a run on
 * several devices heads each device's results with "device D:". */
static int show_results(const run_args *ra, xrt_buffer **outs, int nout, int device) {
  if (device >= 0) printf("device %d:\n", device);
  for (int k = 0; k < nout; k++) {
    xrt_status s = cli_print_result(k, outs[k]);
    if (s) return cli_report(s, NULL);
  }
  return ra->output_dir ? write_results(ra->output_dir, outs, nout, device) : 0;
}

/* Runs exe on every device of its launch (the same --input files on
 * each) and shows every device's results.  n = devices of the launch. */
static int run_devices(const run_args *ra, xrt_client *client, xrt_executable *exe, int n) {
  int nin = xrt_executable_num_inputs(exe), nout = xrt_executable_num_outputs(exe);
  size_t ai = (size_t)(nin > 0 ? nin : 1), ao = (size_t)(nout > 0 ? nout : 1);
  xrt_buffer **bufs = calloc((size_t)n * (ai + ao), sizeof *bufs);
  xrt_buffer **arg_lists[RP_MAX], **out_lists[RP_MAX];
  int rc = !bufs || n > RP_MAX ? EXIT_ERROR : 0;
  if (rc) fprintf(stderr, "xrt: out of memory\n");
  for (int d = 0; !rc && d < n; d++) {
    arg_lists[d] = bufs + (size_t)d * ai;
    out_lists[d] = bufs + (size_t)n * ai + (size_t)d * ao;
    rc = cli_load_npy_inputs(client, xrt_executable_device(exe, d), exe,
                             ra->inputs, ra->num_inputs, arg_lists[d]);
  }
  xrt_status s = XRT_OK;
  if (!rc) {
    xrt_event *done = NULL;
    s = xrt_execute_multi(exe, (xrt_buffer *const *const *)arg_lists, n, nin,
                          (xrt_buffer **const *)out_lists, nout, NULL, &done);
    if (!s) s = xrt_event_await(done);
    if (s) rc = cli_report(s, NULL);
    xrt_event_release(done);
  }
  for (int d = 0; !rc && d < n; d++) rc = show_results(ra, out_lists[d], nout, d);
  for (size_t i = 0; bufs && i < (size_t)n * (ai + ao); i++)
    if (bufs[i]) xrt_buffer_release(bufs[i]);
  free(bufs);
  return rc;
}

/* Runs exe on device 0 and shows its results. */
static int run_one(const run_args *ra, xrt_client *client, xrt_executable *exe) {
  xrt_device *dev = xrt_client_device(client, 0);
  int nin = xrt_executable_num_inputs(exe), nout = xrt_executable_num_outputs(exe);
  xrt_buffer **args = calloc((size_t)(nin > 0 ? nin : 1), sizeof *args);
  xrt_buffer **outs = calloc((size_t)(nout > 0 ? nout : 1), sizeof *outs);
  int rc = !args || !outs ? EXIT_ERROR : 0;
  if (!rc) rc = cli_load_npy_inputs(client, dev, exe, ra->inputs, ra->num_inputs, args);
  if (!rc) {
    xrt_status s = xrt_execute(exe, dev, args, nin, outs, nout, NULL);
    if (s) rc = cli_report(s, NULL);
  }
  if (!rc) rc = show_results(ra, outs, nout, -1);
  for (int i = 0; args && i < nin; i++) xrt_buffer_release(args[i]);
  for (int k = 0; outs && k < nout; k++) xrt_buffer_release(outs[k]);
  free(args);
  free(outs);
  return rc;
}

/* Parses, compiles (replicated over --devices), loads inputs, executes
 * and prints. */
static int run_program(const run_args *ra, xrt_client *client, interp_state *st,
                       const char *text, size_t len) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.entry = ra->entry;
  co.filename = ra->file;
  xrt_program *prog = NULL;
  xrt_executable *exe = NULL;
  int replicas = 1, rc = 0;
  xrt_status s = xrt_program_parse(text, len, &co, &prog);
  if (s) return cli_report(s, NULL);
  st->prog = prog; /* for interpreter.run_parallel */
  st->module = xrt_program_module(prog);
  st->text = text;
  st->len = len;
  st->file = ra->file;
  if (ra->devices > 1) {
    rc = run_replicas(ra, prog, &replicas);
    co.num_replicas = replicas;
  }
  xrt_shape *shapes = NULL; /* a shape-polymorphic entry's, from --input */
  if (!rc && (s = cli_arg_shapes(client, prog, ra->entry, ra->inputs,
                                 ra->num_inputs, &shapes)) != XRT_OK)
    rc = cli_report(s, NULL);
  co.num_arg_shapes = shapes ? ra->num_inputs : 0;
  co.arg_shapes = shapes;
  if (!rc && (s = xrt_compile_program(client, prog, &co, &exe)) != XRT_OK) rc = cli_report(s, NULL);
  free(shapes);
  if (!rc) {
    int n = xrt_executable_num_replicas(exe) * xrt_executable_num_partitions(exe);
    rc = n > 1 ? run_devices(ra, client, exe, n) : run_one(ra, client, exe);
  }
  xrt_executable_release(exe);
  st->prog = NULL;
  st->module = NULL;
  xrt_program_release(prog);
  return rc;
}

static int cmd_run(int argc, char **argv) {
  run_args ra;
  int rc = parse_run_args(argc, argv, &ra);
  char *text = NULL;
  size_t len = 0;
  if (!rc && cli_read_file(ra.file, &text, &len)) rc = EXIT_ERROR;
  xrt_disk_cache *cache = NULL;
  if (!rc) rc = open_disk_cache(ra.cache_dir, &cache);
  xrt_client *client = NULL;
  if (!rc) {
    xrt_client_options opt;
    xrt_client_options_init(&opt);
    opt.num_devices = ra.devices;
    if (cli_mpi_job.on) opt.topology.process_count = 1; /* this process alone */
#ifdef XRT_HAVE_DISK_CACHE
    if (cache) opt.cache_store = xrt_disk_cache_store(cache);
#endif
    xrt_status s = xrt_client_create(&opt, &client);
    if (s) rc = cli_report(s, NULL);
  }
  interp_state ist;
  interp_init(&ist);
  if (!rc) {
    xrt_status s = interp_register(client, &ist);
    if (s) rc = cli_report(s, NULL);
  }
  if (!rc) rc = run_program(&ra, client, &ist, text, len);
  xrt_client_release(client);
  close_disk_cache(cache); /* after the client that used its store */
  interp_free(&ist);
  free(text);
  free(ra.inputs);
  fflush(stdout);
  return rc;
}

/* ======================================================================
 * xrt check
 * ==================================================================== */

/* Outcome of one chunk. */
typedef enum { CHUNK_PASS, CHUNK_CHECK_FAILED, CHUNK_ERROR } chunk_result;

typedef struct check_ctx {
  const char *file;
  xrt_client *client;
  int verbose;
  interp_state *interp;
  /* From the file's `// RUN:` lines: print results and match CHECK lines
   * (a `stablehlo-translate --interpret ... | FileCheck %s` line), and the
   * entry's arguments (its --args="[dense<..> : tensor<..>, ...]"). */
  int filecheck;
  const char *args;
  size_t args_len;
} check_ctx;

/* Where msg has "FILE:LINE" (possibly after a prefix such as "sim: "), or
 * NULL. */
static const char *find_location(const char *msg, const char *file) {
  size_t fl = strlen(file);
  for (const char *p = strstr(msg, file); p; p = strstr(p + 1, file))
    if (p[fl] == ':' && p[fl + 1] >= '0' && p[fl + 1] <= '9') return p;
  return NULL;
}

/* Prints msg with its location first ("F:1:2: sim: text" for "sim: F:1:2:
 * text") so editors and CI logs can jump to it; a message with no location
 * gets the chunk's line. */
static void print_located(const char *msg, const char *file, int line) {
  const char *loc = find_location(msg, file);
  if (!loc) {
    printf("%s:%d: %s", file, line, msg);
    return;
  }
  const char *p = loc + strlen(file);
  while (*p == ':' && p[1] >= '0' && p[1] <= '9') {
    p++;
    while (*p >= '0' && *p <= '9') p++;
  }
  const char *loc_end = p;
  if (*p == ':') p++;
  while (*p == ' ') p++;
  printf("%.*s: %.*s%s", (int)(loc_end - loc), loc, (int)(loc - msg), msg, p);
}

/* Prints one line for a failed chunk: the message, located at the chunk's
 * first line when the message has no location of its own. */
static chunk_result chunk_fail(const check_ctx *cx, int line, xrt_status s,
                               const char *msg) {
  print_located(msg, cx->file, line);
  if (s == XRT_CHECK_FAILED) {
    printf("\n");
    return CHUNK_CHECK_FAILED;
  }
  printf(" [%s]\n", xrt_strerror(s));
  return CHUNK_ERROR;
}

/* The line of function name in the chunk's module, or fallback. */
static int func_line(const xrt_program *prog, const char *name, int fallback) {
  const xrt_ir_module *m = xrt_program_module(prog);
  for (int32_t i = 0; m && name && i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, name) == 0 && m->funcs[i].loc.line > 0)
      return m->funcs[i].loc.line;
  return fallback;
}

/* Prints the results as `stablehlo-translate --interpret` does. */
static xrt_status print_interp_results(const check_ctx *cx, xrt_buffer **outs, int n) {
  for (int k = 0; k < n; k++) {
    xrt_shape shape;
    xrt_status s = xrt_buffer_shape(outs[k], &shape);
    if (s) return s;
    size_t bytes = xrt_buffer_bytes(outs[k]);
    void *host = malloc(bytes ? bytes : 1);
    if (!host) return XRT_RESOURCE_EXHAUSTED;
    s = bytes ? xrt_buffer_to_host(outs[k], host, bytes) : XRT_OK;
    if (!s) interp_emit(cx->interp, "", &shape, host);
    free(host);
    if (s) return s;
  }
  return XRT_OK;
}

/* Runs a compiled entry with args; prints its results for FileCheck. */
static chunk_result run_entry(const check_ctx *cx, int line, xrt_executable *exe,
                              xrt_buffer **args, int nin) {
  int nout = xrt_executable_num_outputs(exe);
  xrt_buffer **outs = calloc((size_t)(nout > 0 ? nout : 1), sizeof *outs);
  if (!outs) return chunk_fail(cx, line, XRT_RESOURCE_EXHAUSTED, "out of memory");
  chunk_result r = CHUNK_PASS;
  xrt_status s = xrt_execute(exe, xrt_client_device(cx->client, 0), args, nin, outs, nout, NULL);
  if (s) r = chunk_fail(cx, line, s, xrt_last_error());
  if (!s && cx->filecheck && (s = print_interp_results(cx, outs, nout)))
    r = chunk_fail(cx, line, s, xrt_last_error());
  for (int k = 0; k < nout; k++)
    if (outs[k]) xrt_buffer_release(outs[k]);
  free(outs);
  return r;
}

/* Compiles and runs one function of a parsed chunk, with the --args of
 * the RUN line when it takes arguments. */
static chunk_result check_entry(const check_ctx *cx, int line, const xrt_program *prog,
                                const xrt_compile_options *base, const char *entry) {
  xrt_compile_options co = *base;
  co.entry = entry;
  xrt_executable *exe = NULL;
  xrt_status s = xrt_compile_program(cx->client, prog, &co, &exe);
  if (s) return chunk_fail(cx, line, s, xrt_last_error());
  int nin = xrt_executable_num_inputs(exe);
  chunk_result r = CHUNK_PASS;
  xrt_buffer **args = NULL;
  int nargs = 0;
  char msg[1024];
  if (nin != 0 && cx->args) {
    s = cli_make_args(cx->client, cx->args, cx->args_len, &args, &nargs, msg,
                        sizeof msg);
    if (s) r = chunk_fail(cx, line, s, msg);
  }
  if (r == CHUNK_PASS && nin != nargs) {
    if (cx->args)
      snprintf(msg, sizeof msg, "function @%s takes %d argument%s but --args has %d",
               xrt_executable_name(exe), nin, nin == 1 ? "" : "s", nargs);
    else
      snprintf(msg, sizeof msg,
               "function @%s takes %d argument%s; check runs functions without "
               "arguments (use 'xrt run --input', or --args=\"[...]\" on the RUN line)",
               xrt_executable_name(exe), nin, nin == 1 ? "" : "s");
    r = chunk_fail(cx, func_line(prog, xrt_executable_name(exe), line),
                   XRT_INVALID_ARGUMENT, msg);
  } else if (r == CHUNK_PASS) {
    r = run_entry(cx, line, exe, args, nin);
  }
  for (int i = 0; i < nargs; i++) xrt_buffer_release(args[i]);
  free(args);
  xrt_executable_release(exe);
  return r;
}

/* Matches the chunk's CHECK lines against what it printed. */
static chunk_result check_output(const check_ctx *cx, const char *text, size_t len,
                                 int line_offset) {
  const outbuf *o = &cx->interp->out;
  char msg[1024];
  int line = 0;
  int m = cli_filecheck(cx->file, text, len, line_offset, o->s ? o->s : "", o->n, msg,
                        sizeof msg, &line);
  if (m < 0) return chunk_fail(cx, line_offset + 1, XRT_RESOURCE_EXHAUSTED, "out of memory");
  return m ? chunk_fail(cx, line, XRT_CHECK_FAILED, msg) : CHUNK_PASS;
}

static int has_main(const xrt_ir_module *m) {
  for (int32_t i = 0; i < m->num_funcs; i++)
    if (strcmp(m->funcs[i].name, "main") == 0) return 1;
  return 0;
}

/* Is the chunk only blanks and // comments?  (MLIR accepts it as an empty
 * module, which has nothing to run.) */
static int chunk_is_empty(const char *p, size_t len) {
  const char *end = p + len;
  while (p < end) {
    if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
      p++;
    } else if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
      while (p < end && *p != '\n') p++;
    } else {
      return 0;
    }
  }
  return 1;
}

/* Runs one chunk.  The entry is main or the only function, as xrt_compile
 * picks it; a chunk with several functions and no main (several tests in
 * one chunk) runs each function that takes no arguments, as the StableHLO
 * interpreter's tests expect; a chunk with no function at all passes. */
static chunk_result check_chunk(const check_ctx *cx, const char *text, size_t len,
                                int line_offset) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = cx->file;
  co.line_offset = line_offset;
  int line = line_offset + 1;
  if (chunk_is_empty(text, len)) {
    if (cx->verbose) printf("%s:%d: pass (empty)\n", cx->file, line);
    return CHUNK_PASS;
  }
  xrt_program *prog = NULL;
  interp_reset(cx->interp);
  xrt_status s = xrt_program_parse(text, len, &co, &prog);
  if (s) return chunk_fail(cx, line, s, xrt_last_error());
  const xrt_ir_module *m = xrt_program_module(prog);
  cx->interp->module = m;
  cx->interp->prog = prog; /* for interpreter.run_parallel */
  cx->interp->text = text;
  cx->interp->len = len;
  cx->interp->file = cx->file;
  cx->interp->line_offset = line_offset;
  chunk_result r = CHUNK_PASS;
  if (!m) {
    r = chunk_fail(cx, line, xrt_last_status(), xrt_last_error());
  } else if (m->num_funcs <= 1 || has_main(m)) {
    if (m->num_funcs > 0) r = check_entry(cx, line, prog, &co, NULL);
  } else {
    int ran = 0;
    for (int32_t i = 0; i < m->num_funcs && r == CHUNK_PASS; i++) {
      if (m->funcs[i].body.num_args != 0) continue;
      ran++;
      r = check_entry(cx, line, prog, &co, m->funcs[i].name);
    }
    if (!ran)
      r = chunk_fail(cx, line, XRT_NOT_FOUND,
                     "no function @main and no function without arguments to run");
  }
  if (r == CHUNK_PASS && cx->filecheck) r = check_output(cx, text, len, line_offset);
  if (r == CHUNK_PASS && cx->verbose) printf("%s:%d: pass\n", cx->file, line);
  cx->interp->module = NULL;
  cx->interp->prog = NULL;
  cx->interp->text = NULL;
  xrt_program_release(prog);
  return r;
}

/* Is the line [p, end) the split marker "// -----" (trailing blanks ok)? */
static int is_split_line(const char *p, const char *end) {
  static const char marker[] = "// -----";
  size_t n = sizeof marker - 1;
  if ((size_t)(end - p) < n || memcmp(p, marker, n) != 0) return 0;
  for (p += n; p < end; p++)
    if (*p != ' ' && *p != '\t' && *p != '\r') return 0;
  return 1;
}

/* Reads the file's `// RUN:` lines: a `stablehlo-translate --interpret`
 * line piped to a plain `FileCheck %s` (not `not ...`, no other
 * --check-prefix) turns on result printing and CHECK matching; its
 * --args="[...]" gives the entry's arguments. */
static void scan_run_lines(check_ctx *cx, const char *text, size_t len) {
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *q = cli_skip_blanks(p, eol);
    if (eol - q > 2 && q[0] == '/' && q[1] == '/') {
      q = cli_skip_blanks(q + 2, eol);
      if (eol - q > 4 && strncmp(q, "RUN:", 4) == 0) {
        q = cli_skip_blanks(q + 4, eol);
        size_t n = (size_t)(eol - q);
        char *run = malloc(n + 1);
        if (run) {
          memcpy(run, q, n);
          run[n] = 0;
          int ours = strncmp(run, "not ", 4) != 0 && strstr(run, "--interpret") &&
                     strstr(run, "FileCheck") && !strstr(run, "check-prefix");
          const char *a = ours ? strstr(q, "--args=") : NULL;
          if (ours) cx->filecheck = 1;
          if (a && !cx->args) {
            a += 7;
            const char *e;
            if (*a == '"' || *a == '\'') {
              e = memchr(a + 1, *a, (size_t)(eol - a - 1));
              a++;
              if (!e) e = eol;
            } else {
              for (e = a; e < eol && *e != ' '; e++) {}
            }
            cx->args = a;
            cx->args_len = (size_t)(e - a);
          }
          free(run);
        }
      }
    }
    p = eol + 1;
  }
}

static int cmd_check(int argc, char **argv) {
  const char *file = NULL, *cache_dir = getenv("XRT_CACHE_DIR"), *v = NULL;
  int split = 0, verbose = 0;
  if (cache_dir && !*cache_dir) cache_dir = NULL;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--split-input-file") == 0 || strcmp(argv[i], "-split-input-file") == 0)
      split = 1;
    else if (cli_option(argc, argv, &i, "--cache-dir", &v)) {
      if (!v || !*v) return usage_error("%s needs a directory", "--cache-dir");
      cache_dir = v;
    }
    else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0)
      verbose = 1;
    else if (argv[i][0] == '-' && argv[i][1])
      return usage_error("check: unknown option '%s'", argv[i]);
    else if (file)
      return usage_error("check: more than one file ('%s')", argv[i]);
    else
      file = argv[i];
  }
  if (!file) return usage_error("%s: no file given", "check");
  char *text;
  size_t len;
  xrt_disk_cache *cache = NULL;
  int rc = open_disk_cache(cache_dir, &cache);
  if (rc) return rc;
  if (cli_read_file(file, &text, &len)) {
    close_disk_cache(cache);
    return EXIT_ERROR;
  }
  interp_state ist;
  interp_init(&ist);
  ist.out.keep = 1;
  check_ctx cx;
  memset(&cx, 0, sizeof cx);
  cx.file = file;
  cx.verbose = verbose;
  cx.interp = &ist;
  scan_run_lines(&cx, text, len);
  xrt_client_options opt;
  xrt_client_options_init(&opt);
#ifdef XRT_HAVE_DISK_CACHE
  if (cache) opt.cache_store = xrt_disk_cache_store(cache);
#endif
  if (cli_mpi_job.on) opt.topology.process_count = 1; /* this process alone */
  xrt_status s = xrt_client_create(&opt, &cx.client);
  if (!s) s = interp_register(cx.client, &ist);
  if (s) {
    xrt_client_release(cx.client);
    close_disk_cache(cache);
    interp_free(&ist);
    free(text);
    return cli_report(s, NULL);
  }
  int passed = 0, failed = 0, errors = 0;
  const char *chunk = text, *p = text, *end = text + len;
  int line = 0, chunk_line = 0; /* lines before p; before chunk */
  while (p <= end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    int at_end = eol == end;
    if ((split && is_split_line(p, eol)) || at_end) {
      const char *stop = at_end ? end : p;
      chunk_result r = check_chunk(&cx, chunk, (size_t)(stop - chunk), chunk_line);
      passed += r == CHUNK_PASS;
      failed += r == CHUNK_CHECK_FAILED;
      errors += r == CHUNK_ERROR;
      chunk = eol + 1;
      chunk_line = line + 1;
    }
    line++;
    if (at_end) break;
    p = eol + 1;
  }
  printf("%d passed, %d failed\n", passed, failed + errors);
  fflush(stdout);
  xrt_client_release(cx.client);
  close_disk_cache(cache);
  interp_free(&ist);
  free(text);
  return errors ? EXIT_ERROR : failed ? EXIT_CHECK : EXIT_PASS;
}

/* ====================================================================== */

int main(int argc, char **argv) {
  if (argc < 2) return usage_error("%s", "no command given");
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    fputs(usage_text, stdout);
    return EXIT_PASS;
  }
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("xrt %s\n", XRT_VERSION_STRING);
    return EXIT_PASS;
  }
  if (!strcmp(cmd, "print")) return cmd_print(argc, argv);
  if (!strcmp(cmd, "bench")) return cmd_bench(argc, argv);
  int is_run = !strcmp(cmd, "run");
  if (!is_run && strcmp(cmd, "check")) return usage_error("unknown command '%s'", cmd);
  int rc = take_mpi_flag(&argc, argv) ? mpi_begin() : 0;
  if (rc) return rc;
  int in_job = cli_mpi_job.on;
  rc = is_run ? cmd_run(argc, argv) : cmd_check(argc, argv);
  return in_job ? mpi_end(rc) : rc;
}
