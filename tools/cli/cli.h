/*
 * cli.h - what the files of the xrt command-line tool share.  MIT
 * licensed; see LICENSE.
 *
 *   main.c          the front end: usage, --mpi, `xrt run`, `xrt check`, main()
 *   print.c         printing values: `xrt run`'s arrays and the StableHLO
 *                   interpreter's output format
 *   interp.c        the interpreter's test ops, infeed and host transfers, as
 *                   host functions (interp_state)
 *   run_parallel.c  interpreter.run_parallel, also spread over --mpi processes
 *   args.c          the --args="[dense<...> : tensor<...>, ...]" parser
 *   filecheck.c     the FileCheck matcher of `// CHECK:` lines
 *   print_cmd.c     `xrt print`: a program as canonical StableHLO text
 *   arg_shapes.c    the argument shapes of a shape-polymorphic program
 *   bench_cmd.c     `xrt bench`: compile time, latency, throughput, memory
 *
 * They use only the public API in xrt.h.  Include this header before any
 * other: it sets _POSIX_C_SOURCE for the system headers.
 */
#ifndef XRT_CLI_H
#define XRT_CLI_H

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdir, clock_gettime */
#endif

#include "xrt.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Participants of one interpreter.run_parallel launch; also the most
 * devices one `xrt run` runs on. */
enum { RP_MAX = 1024 };

/* ---- arg_shapes.c ---- */

/* For an entry with `?` dimensions in its arguments: the shapes of the
 * .npy files inputs[0..num_inputs) (malloc'd into *out), to compile it
 * for; *out stays NULL otherwise. */
xrt_status cli_arg_shapes(xrt_client *client, const xrt_program *prog,
                          const char *entry, const char *const *inputs,
                          int num_inputs, xrt_shape **out);

/* ---- --mpi: this process's place in the MPI job (main.c) ---- */

typedef struct cli_mpi_state {
  int on, me, nproc;
} cli_mpi_state;

extern cli_mpi_state cli_mpi_job;

/* ---- text buffers (print.c) ---- */

/* Text printed during one chunk: echoed to stdout and kept for FileCheck. */
typedef struct outbuf {
  char *s;
  size_t n, cap;
  int keep; /* 0: only echo */
} outbuf;

/* A growable string for building one printed value. */
typedef struct sbuf {
  char *s;
  size_t n, cap;
  int oom;
} sbuf;

/* Echoes n bytes of s to stdout and, when o->keep, appends them to o. */
void ob_add(outbuf *o, const char *s, size_t n);
/* Appends s to b; sets b->oom instead when out of memory. */
void sb_add(sbuf *b, const char *s);

/* ---- printing values (print.c) ---- */

/* Prints "result[k]: tensor<...>" and the values of one output. */
xrt_status cli_print_result(int k, xrt_buffer *buf);

/* ---- `xrt print` (print_cmd.c) ---- */

/* `xrt print FILE [-o OUT]`; returns the exit code. */
int cmd_print(int argc, char **argv);

/* ---- `xrt bench` (bench_cmd.c) ---- */

/* `xrt bench FILE [options]`; returns the exit code. */
int cmd_bench(int argc, char **argv);

/* ---- helpers of every command (common.c) ---- */

/* The tool's exit codes: success, a check.* op failed, anything else. */
enum { CLI_EXIT_PASS = 0, CLI_EXIT_CHECK = 1, CLI_EXIT_ERROR = 2 };

/* Reads a whole file into a NUL-terminated heap string (the caller frees
 * *out); 0, or -1 after printing why to stderr. */
int cli_read_file(const char *path, char **out, size_t *out_len);

/* Prints "xrt: [what: ]<last error> [<status>]" to stderr; the exit code. */
int cli_report(xrt_status s, const char *what);

/* Matches argv[*i] as "--name VALUE" or "--name=VALUE": 1 and *value set
 * (NULL when the value is missing), *i advanced past it; 0 otherwise. */
int cli_option(int argc, char **argv, int *i, const char *name,
               const char **value);

/* Loads num_files .npy files onto dev as exe's arguments (args[i]; the
 * caller releases them), checked against the entry's signature so that a
 * mistake names the file; 0 or CLI_EXIT_ERROR after printing why. */
int cli_load_npy_inputs(xrt_client *client, xrt_device *dev, xrt_executable *exe,
                        const char *const *files, int num_files, xrt_buffer **args);

/* ---- the interpreter's test ops (interp.c) ---- */

/* What interpreter.probe recorded: one per probe_id and iteration. */
typedef struct probe_rec {
  char *id;
  xrt_shape shape;
  void *data;
  size_t bytes;
} probe_rec;

/* A list of values on a host queue: what one infeed function returned,
 * or what one send passed.  Each tensor's data is its own allocation. */
typedef struct hmsg {
  struct hmsg *next;
  int n;
  xrt_host_tensor t[];
} hmsg;

typedef struct hqueue {
  hmsg *head, *tail;
} hqueue;

/* The host side of the send/recv ops with is_host_transfer, by handle. */
typedef struct hchan {
  struct hchan *next;
  int64_t handle;
  hqueue q;
} hchan;

/* --mpi: where a channel's host transfers of the running
 * interpreter.run_parallel meet (the processes of its senders and of its
 * receivers), and how many went each way across processes.  A host
 * function does not know which participant calls it, so a channel whose
 * senders (or receivers) sit on several processes cannot be routed. */
typedef struct rp_route {
  int64_t handle;
  int send_proc, recv_proc;
  int spread; /* senders or receivers on several processes */
  uint64_t nsent, nrecv;
} rp_route;

enum { RP_MAX_ROUTES = 64 };

typedef struct interp_state {
  pthread_mutex_t mu;
  outbuf out;
  probe_rec *recs;
  size_t num_recs, cap_recs;
  const xrt_ir_module *module; /* of the program running, for SSA names */
  const xrt_ir_module *module2; /* a run_parallel wrapper program's */
  /* interpreter.run_parallel: the running chunk (program, text, where it
   * starts in its file), the client whose devices run its launches
   * (created on first use, grown when a launch needs more devices) and
   * the host queues of infeed and host transfers (guarded by qmu). */
  const xrt_program *prog;
  const char *text, *file;
  size_t len;
  int line_offset;
  xrt_client *par;
  int par_devices, par_busy;
  pthread_mutex_t qmu;
  pthread_cond_t qcv;
  hqueue infeed;
  hchan *chans;
  /* --mpi: text printed while a launch runs waits in hold (under mu) until
   * every process's is in; the running launch's routes (under qmu) and
   * its number, alike in every process. */
  int holding;
  sbuf hold;
  rp_route routes[RP_MAX_ROUTES];
  int nroutes;
  uint64_t launch_no;
} interp_state;

/* An interp_state's life: init, reset before each chunk, free. */
void interp_init(interp_state *st);
void interp_reset(interp_state *st);
void interp_free(interp_state *st);
/* Registers the host functions of the interpreter's ops on c. */
xrt_status interp_register(xrt_client *c, interp_state *st);
/* Prints one value in the interpreter's format plus a newline (print.c). */
void interp_emit(interp_state *st, const char *prefix, const xrt_shape *s, const void *data);

/* A copy of n host tensors as one queue entry; NULL when out of memory. */
hmsg *hmsg_new(const xrt_host_tensor *t, int n);
void hq_push(hqueue *q, hmsg *m);
/* Room for one more probe record, if memory allows (callers hold st->mu
 * and check num_recs < cap_recs). */
void cli_probe_room(interp_state *st);
/* A recv nobody sends to fails after this long rather than hang:
 * XRT_RECV_TIMEOUT_MS, default 10 s. */
int64_t cli_recv_timeout_ms(void);
/* Sets *out to the handle of op's channel_handle attribute: 0, or -1 when
 * op has none. */
int cli_channel_handle(const xrt_ir_op *op, int64_t *out);

/* ---- interpreter.run_parallel (run_parallel.c) ---- */

/* The host function of interpreter.run_parallel (user: the interp_state). */
xrt_status cli_host_run_parallel(void *user, xrt_host_call *call);

/* ---- --args (args.c) ---- */

/* The first character of [p, end) that is not a blank or newline. */
const char *cli_skip_blanks(const char *p, const char *end);
/* Builds one buffer on client for each item of args (args_len bytes, a
 * list like "[dense<1> : tensor<2xi32>, ...]"); *n_out is how many; fills
 * msg on failure. */
xrt_status cli_make_args(xrt_client *client, const char *args, size_t args_len,
                         xrt_buffer ***out, int *n_out, char *msg, size_t cap);

/* ---- FileCheck (filecheck.c) ---- */

/* Matches the `// CHECK:` lines of a chunk of file (text, len bytes, after
 * its first line_offset lines) against out, the out_len bytes the chunk
 * printed.  0: they match (or there are none); 1: one does not, and msg
 * says which and *line is its line; -1: out of memory. */
int cli_filecheck(const char *file, const char *text, size_t len, int line_offset,
                  const char *out, size_t out_len, char *msg, size_t cap, int *line);

#endif /* XRT_CLI_H */
