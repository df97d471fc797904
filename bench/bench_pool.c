/*
 * bench_pool.c - the device thread pool, transposes and peak memory.
 * Public API only.  MIT licensed.
 *
 * Prints "KEY = NUMBER" lines (times are the best of several runs):
 *   transpose.f32_4096sq.ms            xrt: stablehlo.transpose [1, 0] of a
 *                                      4096x4096 f32 array, one thread
 *   transpose.f32_4096sq.torch_ms      torch: x.t().contiguous(), one thread
 *   transpose.f32_4096sq.ratio_torch   torch time / xrt time (target >= 1)
 *   threads.2.transpose_speedup        1-thread time / 2-thread time (info)
 *   memory.live_mib                    largest set of simultaneously live
 *                                      values of a 60-op chain on 64 and
 *                                      128 MiB arrays (computed here)
 *   memory.peak_mib                    peak RSS growth of one execute
 *   memory.peak_ratio                  peak / (live + 16 MiB) (target <= 1.2)
 *
 * Baselines come from bench/baseline.py through /usr/bin/python3 (override
 * with XRT_PYTHON and XRT_BASELINE); a missing baseline is reported on
 * stderr and its ratio is left out.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, popen, fork */
#endif

#define BENCH_NAME "bench_pool"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 4096
#define MIB (1024.0 * 1024.0)

/* ---- transpose ---- */

static const char transpose_src[] =
    "func.func @main(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {\n"
    "  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<4096x4096xf32>)"
    " -> tensor<4096x4096xf32>\n"
    "  func.return %0 : tensor<4096x4096xf32>\n"
    "}\n";

/* Best seconds of one transpose execute (output released each time, as
 * torch frees its result), or -1; checks the result once. */
static double time_transpose(int threads, const float *host, float *back) {
  enum { REPS = 9 };
  xrt_client *c = bench_client(0, threads);
  xrt_executable *exe = NULL;
  xrt_buffer *in = NULL;
  xrt_shape shape = {XRT_F32, 2, {N, N}};
  if (!c) return -1;
  xrt_device *dev = xrt_client_device(c, 0);
  xrt_status s =
      xrt_compile(c, transpose_src, sizeof transpose_src - 1, NULL, &exe);
  if (!s) s = xrt_buffer_from_host(c, dev, &shape, host, &in);
  double best = 1e30;
  for (int r = 0; !s && r <= REPS; r++) {
    xrt_buffer *out = NULL;
    double t0 = bench_now_s();
    s = xrt_execute(exe, dev, &in, 1, &out, 1, NULL);
    double t = bench_now_s() - t0;
    if (!s && r == 0) s = xrt_buffer_to_host(out, back, sizeof(float) * N * N);
    xrt_buffer_release(out);
    if (r > 0 && t < best) best = t; /* run 0 warms the caches */
  }
  if (s) bench_fail("transpose", s);
  xrt_client_release(c);
  if (s) return -1;
  for (long i = 0; i < N; i += 7)
    for (long j = 0; j < N; j += 5)
      if (back[i * N + j] != host[j * N + i]) {
        fprintf(stderr, "bench_pool: wrong transpose at [%ld, %ld]\n", i, j);
        return -1;
      }
  return best;
}

/* Runs the Python baseline; seconds, or -1 with the reason on stderr. */
static double baseline(const char *args) {
  const char *py = getenv("XRT_PYTHON"), *script = getenv("XRT_BASELINE");
  char cmd[512], why[256];
  snprintf(cmd, sizeof cmd, "%s %s %s 2>&1", py ? py : "/usr/bin/python3",
           script ? script : "bench/baseline.py", args);
  double t = bench_popen_number(cmd, why, sizeof why);
  if (t < 0)
    fprintf(stderr, "bench_pool: no baseline from '%s': %s\n", cmd, why);
  return t;
}

static int bench_transpose(void) {
  float *host = malloc(sizeof(float) * N * N), *back = malloc(sizeof(float) * N * N);
  if (!host || !back) {
    free(host);
    free(back);
    fprintf(stderr, "bench_pool: out of memory\n");
    return 1;
  }
  for (long i = 0; i < (long)N * N; i++) host[i] = (float)(i % 1000003);
  double t1 = time_transpose(1, host, back);
  double t2 = t1 > 0 ? time_transpose(2, host, back) : -1;
  free(host);
  free(back);
  if (t1 < 0 || t2 < 0) return 1;
  printf("transpose.f32_4096sq.ms = %.3f\n", t1 * 1e3);
  printf("threads.2.transpose_speedup = %.3f\n", t1 / t2);
  double torch = baseline("torch_transpose 4096");
  if (torch > 0) {
    printf("transpose.f32_4096sq.torch_ms = %.3f\n", torch * 1e3);
    printf("transpose.f32_4096sq.ratio_torch = %.3f\n", torch / t1);
  }
  return 0;
}

/* ---- peak memory ---- */

/* A chain of STEPS steps on 64 and 128 MiB values, with v0 = x:
 *   t_k = transpose(v_{k-1})                       4096x4096
 *   w_k = concatenate(t_k, v_{k-1}), dim 1          4096x8192
 *   v_k = slice(w_k) [0:4096, 2048:6144]            4096x4096
 * returning v_STEPS.  Mixed sizes test that the planner reuses memory
 * without fragmenting; no op here fuses away.  The ops are kept as a
 * list so the live sets below come from the same description. */
enum { STEPS = 20, NOPS = 3 * STEPS };

typedef struct chain_op {
  int mib;     /* result size */
  int in[2];   /* operand op indices; -1: the argument x; -2: none */
} chain_op;

static void chain_ops(chain_op *ops) {
  for (int k = 0; k < STEPS; k++) {
    int prev = k == 0 ? -1 : 3 * k - 1, t = 3 * k;
    ops[t] = (chain_op){64, {prev, -2}};
    ops[t + 1] = (chain_op){128, {t, prev}};
    ops[t + 2] = (chain_op){64, {t + 1, -2}};
  }
}

static char *chain_program(const chain_op *ops) {
  size_t cap = 512 + (size_t)NOPS * 256;
  char *p = malloc(cap);
  if (!p) return NULL;
  const char *A = "tensor<4096x4096xf32>", *W = "tensor<4096x8192xf32>";
  int n = snprintf(p, cap, "func.func @main(%%x: %s) -> %s {\n", A, A);
  for (int i = 0; i < NOPS; i++) {
    const chain_op *o = &ops[i];
    char a[16], b[16];
    snprintf(a, sizeof a, o->in[0] < 0 ? "x" : "v%d", o->in[0]);
    snprintf(b, sizeof b, o->in[1] < 0 ? "x" : "v%d", o->in[1]);
    if (i % 3 == 0)
      n += snprintf(p + n, cap - (size_t)n, "  %%v%d = stablehlo.transpose %%%s, "
                    "dims = [1, 0] : (%s) -> %s\n", i, a, A, A);
    else if (i % 3 == 1)
      n += snprintf(p + n, cap - (size_t)n, "  %%v%d = stablehlo.concatenate "
                    "%%%s, %%%s, dim = 1 : (%s, %s) -> %s\n", i, a, b, A, A, W);
    else
      n += snprintf(p + n, cap - (size_t)n, "  %%v%d = stablehlo.slice %%%s "
                    "[0:4096, 2048:6144] : (%s) -> %s\n", i, a, W, A);
  }
  snprintf(p + n, cap - (size_t)n, "  func.return %%v%d : %s\n}\n", NOPS - 1, A);
  return p;
}

/* The largest sum of live values at any op: a value lives from the op that
 * makes it to its last reader (the last one: to the end).  The argument is
 * not counted: it is resident before the execute. */
static double chain_live_mib(const chain_op *ops) {
  int last[NOPS];
  for (int i = 0; i < NOPS; i++) last[i] = i == NOPS - 1 ? NOPS : i;
  for (int i = 0; i < NOPS; i++)
    for (int k = 0; k < 2; k++)
      if (ops[i].in[k] >= 0 && last[ops[i].in[k]] < i) last[ops[i].in[k]] = i;
  int best = 0;
  for (int p = 0; p < NOPS; p++) {
    int live = 0;
    for (int i = 0; i <= p; i++)
      if (last[i] >= p) live += ops[i].mib;
    if (live > best) best = live;
  }
  return best;
}

/* kB of the "Key:" line of /proc/self/status, or -1. */
static long status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t kl = strlen(key);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, key, kl) == 0) v = strtol(line + kl, NULL, 10);
  if (f) fclose(f);
  return v;
}

/* In a child: the peak RSS growth (MiB) of one execute of the chain. */
static int measure_peak(int fd) {
  xrt_executable *exe = NULL;
  xrt_buffer *in = NULL, *out = NULL;
  xrt_shape shape = {XRT_F32, 2, {N, N}};
  chain_op ops[NOPS];
  chain_ops(ops);
  char *src = chain_program(ops);
  float *host = calloc((size_t)N * N, sizeof(float));
  xrt_client *c = src && host ? bench_client(0, 1) : NULL;
  xrt_status s = c ? XRT_OK : XRT_RESOURCE_EXHAUSTED;
  xrt_device *dev = c ? xrt_client_device(c, 0) : NULL;
  if (!s) s = xrt_compile(c, src, strlen(src), NULL, &exe);
  if (!s) s = xrt_buffer_from_host(c, dev, &shape, host, &in);
  free(host);
  free(src);
  if (s) return bench_fail("memory chain", s);
  long before = status_kb("VmRSS:");
  /* Reset the high-water mark to the current RSS (Linux >= 4.0). */
  FILE *cr = fopen("/proc/self/clear_refs", "w");
  if (cr) {
    fputs("5", cr);
    fclose(cr);
  }
  if (status_kb("VmHWM:") > before + 1024) /* no reset: fork's copy */
    fprintf(stderr, "bench_pool: VmHWM was not reset; the peak is high\n");
  s = xrt_execute(exe, dev, &in, 1, &out, 1, NULL);
  long peak = status_kb("VmHWM:");
  if (s) return bench_fail("memory chain execute", s);
  double mib = (double)(peak - before) / 1024.0;
  if (write(fd, &mib, sizeof mib) != (ssize_t)sizeof mib) return 1;
  xrt_client_release(c);
  return 0;
}

static int bench_memory(void) {
  int fds[2];
  if (pipe(fds) != 0) return 1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(fds[0]);
    _exit(measure_peak(fds[1]));
  }
  close(fds[1]);
  double mib = -1;
  ssize_t got = read(fds[0], &mib, sizeof mib);
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (got != (ssize_t)sizeof mib || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
      mib < 0 || status_kb("VmHWM:") < 0) {
    fprintf(stderr, "bench_pool: the peak-memory child failed\n");
    return 1;
  }
  chain_op ops[NOPS];
  chain_ops(ops);
  double live = chain_live_mib(ops);
  printf("memory.live_mib = %.1f\n", live);
  printf("memory.peak_mib = %.1f\n", mib);
  printf("memory.peak_ratio = %.3f\n", mib / (live + 16.0));
  return 0;
}

int main(void) {
  int rc = bench_memory();
  rc |= bench_transpose();
  return rc;
}
