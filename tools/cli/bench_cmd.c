/*
 * bench_cmd.c - `xrt bench`: how fast a program runs, as
 * iree-benchmark-module and onnxruntime_perf_test tell their users.  MIT
 * licensed; see LICENSE.
 *
 *   xrt bench FILE [--input A.npy]... | [--inputs random|zeros]
 *                  [--iterations N] [--warmup N] [--threads T]
 *                  [--devices N] [--entry NAME] [--json]
 *
 * It parses and compiles the entry function on a fresh simulated client
 * (no disk cache: the compile is measured), loads its arguments (.npy
 * files, as `xrt run` takes them, or generated), runs it --warmup times
 * untimed and --iterations times timed, and prints the compile time, the
 * latency of one call (min, median, p90, mean), the throughput and the
 * peak memory the client held while running.  A call is one xrt_execute,
 * or with --devices N > 1 one launch over the N devices (xrt_execute_multi
 * and its wait); the release of its outputs is outside the latency and
 * inside the throughput's wall time.
 *
 * Peak memory: the client's allocator is wrapped to count the bytes it
 * holds at once (on the simulator device memory is host memory, so this
 * is device buffers, scratch arenas, the executable and the client's own
 * records); the high-water mark is taken from just before the first call
 * (the compiled executable and the inputs are in) to the end.
 *
 * --json prints one object instead: file, entry, inputs ("files",
 * "random" or "zeros"), num_inputs, devices, threads (per device, as the
 * device reports its pool), warmup, iterations, parse_ms, compile_ms
 * (parse included), min_ms, median_ms, p90_ms (nearest rank), mean_ms,
 * calls_per_s and peak_memory_bytes.
 *
 * Exit codes as `xrt run`: 0 success, 2 bad usage, a program that does not
 * parse or compile, an input that does not fit, a runtime error.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BENCH_OK = CLI_EXIT_PASS, BENCH_ERROR = CLI_EXIT_ERROR };
enum { BENCH_MAX_ITERATIONS = 10000000, BENCH_MAX_THREADS = 1024 };

typedef enum { IN_FILES, IN_RANDOM, IN_ZEROS } input_kind;

typedef struct bench_args {
  const char *file;
  const char *entry;
  int devices, threads; /* threads 0: the client's default */
  long iterations, warmup;
  int json;
  input_kind kind;
  int kind_given;
  int num_inputs;
  const char **inputs; /* borrowed from argv */
} bench_args;

static const char bench_usage[] =
    "usage: xrt bench FILE [--input A.npy]... [--inputs random|zeros]\n"
    "                 [--iterations N] [--warmup N] [--threads T] [--devices N]\n"
    "                 [--entry NAME] [--json]\n"
    "(xrt --help describes the options)\n";

static int bench_usage_error(const char *fmt, const char *arg) {
  fputs("xrt: bench: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n", stderr);
  fputs(bench_usage, stderr);
  return BENCH_ERROR;
}

/* A decimal integer in [lo, hi]; -1 if v is not one. */
static int parse_count(const char *v, long lo, long hi, long *out) {
  if (!v || !*v) return -1;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || end == v || *end || n < lo || n > hi) return -1;
  *out = n;
  return 0;
}

/* 0, an exit code after a usage error, or -1 after printing the usage
 * (--help). */
static int parse_bench_args(int argc, char **argv, bench_args *ba) {
  memset(ba, 0, sizeof *ba);
  ba->devices = 1;
  ba->iterations = 10;
  ba->warmup = 2;
  ba->kind = IN_RANDOM;
  ba->inputs = calloc((size_t)argc, sizeof *ba->inputs);
  if (!ba->inputs) return bench_usage_error("%s", "out of memory");
  for (int i = 2; i < argc; i++) {
    const char *v = NULL;
    long n = 0;
    if (cli_option(argc, argv, &i, "--iterations", &v)) {
      if (parse_count(v, 1, BENCH_MAX_ITERATIONS, &n))
        return bench_usage_error("--iterations needs a number from 1 to 10000000, not '%s'",
                                 v ? v : "");
      ba->iterations = n;
    } else if (cli_option(argc, argv, &i, "--warmup", &v)) {
      if (parse_count(v, 0, BENCH_MAX_ITERATIONS, &n))
        return bench_usage_error("--warmup needs a number from 0 to 10000000, not '%s'",
                                 v ? v : "");
      ba->warmup = n;
    } else if (cli_option(argc, argv, &i, "--threads", &v)) {
      if (parse_count(v, 1, BENCH_MAX_THREADS, &n))
        return bench_usage_error("--threads needs a number from 1 to 1024, not '%s'",
                                 v ? v : "");
      ba->threads = (int)n;
    } else if (cli_option(argc, argv, &i, "--devices", &v)) {
      if (parse_count(v, 1, RP_MAX, &n))
        return bench_usage_error("--devices needs a number from 1 to 1024, not '%s'",
                                 v ? v : "");
      ba->devices = (int)n;
    } else if (cli_option(argc, argv, &i, "--inputs", &v)) {
      if (v && !strcmp(v, "random")) ba->kind = IN_RANDOM;
      else if (v && !strcmp(v, "zeros")) ba->kind = IN_ZEROS;
      else return bench_usage_error("--inputs is 'random' or 'zeros', not '%s'", v ? v : "");
      ba->kind_given = 1;
    } else if (cli_option(argc, argv, &i, "--input", &v)) {
      if (!v) return bench_usage_error("%s needs a file", "--input");
      ba->inputs[ba->num_inputs++] = v;
    } else if (cli_option(argc, argv, &i, "--entry", &v)) {
      if (!v || !*v) return bench_usage_error("%s needs a function name", "--entry");
      ba->entry = v;
    } else if (!strcmp(argv[i], "--json")) {
      ba->json = 1;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(bench_usage, stdout);
      return -1; /* done: exit 0 */
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return bench_usage_error("unknown option '%s'", argv[i]);
    } else if (ba->file) {
      return bench_usage_error("more than one program file ('%s')", argv[i]);
    } else {
      ba->file = argv[i];
    }
  }
  if (!ba->file) return bench_usage_error("%s", "no program file given");
  if (ba->num_inputs && ba->kind_given)
    return bench_usage_error("%s", "--input files and --inputs exclude each other");
  if (ba->num_inputs) ba->kind = IN_FILES;
  return 0;
}

/* ---- the counting allocator ---- */

typedef struct mem_count {
  atomic_size_t in_use, peak;
} mem_count;

/* Each block starts with its size, in a header that keeps malloc's
 * alignment. */
typedef union mem_head {
  size_t size;
  max_align_t align;
} mem_head;

static void *count_alloc(void *self, size_t size) {
  mem_count *m = self;
  if (size > SIZE_MAX - sizeof(mem_head)) return NULL;
  mem_head *h = malloc(sizeof *h + size);
  if (!h) return NULL;
  h->size = size;
  size_t now = atomic_fetch_add(&m->in_use, size) + size;
  size_t peak = atomic_load(&m->peak);
  while (now > peak && !atomic_compare_exchange_weak(&m->peak, &peak, now)) {
  }
  return h + 1;
}

static void count_free(void *self, void *ptr) {
  if (!ptr) return;
  mem_count *m = self;
  mem_head *h = (mem_head *)ptr - 1;
  atomic_fetch_sub(&m->in_use, h->size);
  free(h);
}

/* ---- inputs ---- */

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

/* Uniform in [-1, 1). */
static double rng_unit(uint64_t *s) {
  return (double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static void put_le(unsigned char *p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* One element of a random input: floats uniform in [-1, 1) (both parts of
 * a complex number), integers in [0, 16) (in [0, 2^(bits-1)) when that is
 * smaller), pred false or true. */
static void random_element(xrt_dtype t, unsigned char *p, size_t size, uint64_t *s) {
  if (t == XRT_PRED) {
    p[0] = (unsigned char)(rng_next(s) >> 63);
  } else if (t == XRT_F32 || t == XRT_C64) {
    for (size_t k = 0; k < size / 4; k++) {
      float f = (float)rng_unit(s);
      put_le(p + 4 * k, xrt__f32_to_bits(f), 4);
    }
  } else if (t == XRT_F64 || t == XRT_C128) {
    for (size_t k = 0; k < size / 8; k++) put_le(p + 8 * k, xrt__f64_to_bits(rng_unit(s)), 8);
  } else if (t == XRT_F16) {
    put_le(p, xrt_f64_to_f16(rng_unit(s)), 2);
  } else if (t == XRT_BF16) {
    put_le(p, xrt_f64_to_bf16(rng_unit(s)), 2);
  } else if (xrt_dtype_is_float(t)) {
    xrt_minifloat_format f;
    double d = rng_unit(s);
    if (xrt_minifloat_format_of(t, &f) && f.kind == XRT_MINIFLOAT_E8M0) d = fabs(d);
    int32_t bits = xrt_minifloat_from_f64(t, d);
    p[0] = (unsigned char)(bits < 0 ? 0 : bits);
  } else {
    int bits = xrt_dtype_bits(t);
    uint64_t range = bits > 5 ? 16 : (uint64_t)1 << (bits - 1);
    put_le(p, (rng_next(s) >> 32) % range, size);
  }
}

/* A host array of shape: zeros, or random values from *seed. */
static void *make_host_data(const xrt_shape *shape, input_kind kind, uint64_t *seed,
                            size_t *bytes) {
  *bytes = xrt_shape_bytes(shape);
  unsigned char *data = calloc(*bytes ? *bytes : 1, 1);
  if (!data || kind == IN_ZEROS) return data;
  size_t size = xrt_dtype_size(shape->dtype);
  for (size_t off = 0; size && off + size <= *bytes; off += size)
    random_element(shape->dtype, data + off, size, seed);
  return data;
}

/* Generated inputs on dev: the same values on every device (one seed). */
static int make_inputs(const bench_args *ba, xrt_client *client, xrt_device *dev,
                       xrt_executable *exe, xrt_buffer **args) {
  int n = xrt_executable_num_inputs(exe);
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < n; i++) {
    xrt_shape shape;
    xrt_status s = xrt_executable_input_shape(exe, i, &shape);
    if (s) return cli_report(s, NULL);
    size_t bytes = 0;
    void *data = make_host_data(&shape, ba->kind, &seed, &bytes);
    if (!data) {
      fprintf(stderr, "xrt: out of memory for argument %d (%zu bytes)\n", i, bytes);
      return BENCH_ERROR;
    }
    s = xrt_buffer_from_host(client, dev, &shape, data, &args[i]);
    free(data);
    if (s) return cli_report(s, NULL);
  }
  return 0;
}

/* ---- timing ---- */

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct bench_result {
  double parse_s, compile_s;
  double min_s, median_s, p90_s, mean_s;
  double calls_per_s;
  size_t peak_bytes;
  int threads; /* the pool's threads per device, as the device says */
  int num_inputs;
  const char *entry;
} bench_result;

/* The launch: n devices, each with its argument and output lists. */
typedef struct launch {
  xrt_executable *exe;
  xrt_device *dev0;
  int n, nin, nout;
  xrt_buffer **bufs; /* n * (nin + nout) */
  xrt_buffer **args[RP_MAX], **outs[RP_MAX];
} launch;

static xrt_status launch_call(launch *l) {
  if (l->n == 1)
    return xrt_execute(l->exe, l->dev0, l->args[0], l->nin, l->outs[0], l->nout, NULL);
  xrt_event *done = NULL;
  xrt_status s = xrt_execute_multi(l->exe, (xrt_buffer *const *const *)l->args, l->n, l->nin,
                                   (xrt_buffer **const *)l->outs, l->nout, NULL, &done);
  if (!s) s = xrt_event_await(done);
  xrt_event_release(done);
  return s;
}

static void launch_drop_outputs(launch *l) {
  for (int d = 0; d < l->n; d++)
    for (int k = 0; k < l->nout; k++) {
      xrt_buffer_release(l->outs[d][k]);
      l->outs[d][k] = NULL;
    }
}

/* Loads the inputs, warms up and times the calls. */
static int run_bench(const bench_args *ba, xrt_client *client, xrt_executable *exe,
                     mem_count *mc, bench_result *r) {
  launch l;
  memset(&l, 0, sizeof l);
  l.exe = exe;
  l.n = xrt_executable_num_replicas(exe) * xrt_executable_num_partitions(exe);
  l.nin = xrt_executable_num_inputs(exe);
  l.nout = xrt_executable_num_outputs(exe);
  if (l.n < 1 || l.n > RP_MAX || l.nin < 0 || l.nout < 0) return cli_report(XRT_INTERNAL, NULL);
  size_t ai = (size_t)(l.nin > 0 ? l.nin : 1), ao = (size_t)(l.nout > 0 ? l.nout : 1);
  l.bufs = calloc((size_t)l.n * (ai + ao), sizeof *l.bufs);
  double *lat = calloc((size_t)ba->iterations, sizeof *lat);
  int rc = !l.bufs || !lat ? BENCH_ERROR : 0;
  if (rc) fprintf(stderr, "xrt: out of memory\n");
  for (int d = 0; !rc && d < l.n; d++) {
    xrt_device *dev = l.n == 1 ? xrt_client_device(client, 0) : xrt_executable_device(exe, d);
    if (d == 0) l.dev0 = dev;
    l.args[d] = l.bufs + (size_t)d * ai;
    l.outs[d] = l.bufs + (size_t)l.n * ai + (size_t)d * ao;
    rc = ba->kind == IN_FILES ? cli_load_npy_inputs(client, dev, exe, ba->inputs, ba->num_inputs, l.args[d])
                              : make_inputs(ba, client, dev, exe, l.args[d]);
  }
  xrt_attribute cores;
  if (!rc && !xrt_device_attribute_find(l.dev0, "cores", &cores) &&
      cores.type == XRT_ATTRIBUTE_INT)
    r->threads = (int)cores.int_value;
  /* The high-water mark from here on. */
  atomic_store(&mc->peak, atomic_load(&mc->in_use));
  xrt_status s = XRT_OK;
  for (long i = 0; !rc && i < ba->warmup; i++) {
    if ((s = launch_call(&l))) rc = cli_report(s, "warmup call");
    launch_drop_outputs(&l);
  }
  double t_start = now_seconds();
  for (long i = 0; !rc && i < ba->iterations; i++) {
    double t0 = now_seconds();
    s = launch_call(&l);
    lat[i] = now_seconds() - t0;
    if (s) rc = cli_report(s, NULL);
    launch_drop_outputs(&l);
  }
  double wall = now_seconds() - t_start;
  if (!rc) {
    r->peak_bytes = atomic_load(&mc->peak);
    double sum = 0;
    for (long i = 0; i < ba->iterations; i++) sum += lat[i];
    qsort(lat, (size_t)ba->iterations, sizeof *lat, cmp_double);
    long n = ba->iterations;
    r->min_s = lat[0];
    r->median_s = n % 2 ? lat[n / 2] : 0.5 * (lat[n / 2 - 1] + lat[n / 2]);
    long k90 = (long)ceil(0.9 * (double)n) - 1; /* nearest rank */
    r->p90_s = lat[k90 < 0 ? 0 : k90];
    r->mean_s = sum / (double)n;
    r->calls_per_s = wall > 0 ? (double)n / wall : 0;
  }
  for (size_t i = 0; l.bufs && i < (size_t)l.n * (ai + ao); i++)
    if (l.bufs[i]) xrt_buffer_release(l.bufs[i]);
  free(l.bufs);
  free(lat);
  return rc;
}

/* ---- output ---- */

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static const char *kind_name(input_kind k) {
  return k == IN_FILES ? "files" : k == IN_ZEROS ? "zeros" : "random";
}

/* "12.345 ms", or "0.420 us" below a millisecond. */
static void fmt_time(double s, char buf[32]) {
  if (s < 1e-3) snprintf(buf, 32, "%.3f us", s * 1e6);
  else snprintf(buf, 32, "%.3f ms", s * 1e3);
}

static void print_result(const bench_args *ba, const bench_result *r) {
  if (ba->json) {
    printf("{\"file\": ");
    json_string(ba->file);
    printf(", \"entry\": ");
    json_string(r->entry);
    printf(", \"inputs\": \"%s\", \"num_inputs\": %d, \"devices\": %d, "
           "\"threads\": %d, \"warmup\": %ld, \"iterations\": %ld, "
           "\"parse_ms\": %.6f, \"compile_ms\": %.6f, \"min_ms\": %.6f, "
           "\"median_ms\": %.6f, \"p90_ms\": %.6f, \"mean_ms\": %.6f, "
           "\"calls_per_s\": %.3f, \"peak_memory_bytes\": %zu}\n",
           kind_name(ba->kind), r->num_inputs, ba->devices, r->threads, ba->warmup,
           ba->iterations, r->parse_s * 1e3, (r->parse_s + r->compile_s) * 1e3, r->min_s * 1e3,
           r->median_s * 1e3, r->p90_s * 1e3, r->mean_s * 1e3, r->calls_per_s,
           r->peak_bytes);
    return;
  }
  char t[5][32];
  fmt_time(r->parse_s + r->compile_s, t[0]);
  fmt_time(r->parse_s, t[1]);
  printf("program:     %s @%s, %d input%s (%s), %d device%s, %d thread%s per device\n",
         ba->file, r->entry, r->num_inputs, r->num_inputs == 1 ? "" : "s",
         kind_name(ba->kind), ba->devices, ba->devices == 1 ? "" : "s", r->threads,
         r->threads == 1 ? "" : "s");
  printf("compile:     %s (parse %s)\n", t[0], t[1]);
  fmt_time(r->min_s, t[1]);
  fmt_time(r->median_s, t[2]);
  fmt_time(r->p90_s, t[3]);
  fmt_time(r->mean_s, t[4]);
  printf("latency:     min %s, median %s, p90 %s, mean %s (%ld call%s after %ld warmup)\n",
         t[1], t[2], t[3], t[4], ba->iterations, ba->iterations == 1 ? "" : "s", ba->warmup);
  printf("throughput:  %.2f calls/s\n", r->calls_per_s);
  printf("peak memory: %zu bytes (%.1f MiB)\n", r->peak_bytes,
         (double)r->peak_bytes / (1024.0 * 1024.0));
}

/* ---- the command ---- */

/* Parses and compiles (replicated over --devices), then runs the bench. */
static int bench_program(const bench_args *ba, xrt_client *client, mem_count *mc,
                         const char *text, size_t len) {
  bench_result r;
  memset(&r, 0, sizeof r);
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.entry = ba->entry;
  co.filename = ba->file;
  xrt_program *prog = NULL;
  xrt_executable *exe = NULL;
  int rc = 0;
  double t0 = now_seconds();
  xrt_status s = xrt_program_parse(text, len, &co, &prog);
  double t1 = now_seconds();
  if (s) return cli_report(s, NULL);
  r.parse_s = t1 - t0;
  if (ba->devices > 1) {
    const xrt_ir_module *m = xrt_program_module(prog);
    int parts = m && m->num_partitions > 0 ? m->num_partitions : 1;
    if (ba->devices % parts != 0) {
      fprintf(stderr, "xrt: --devices %d is not a multiple of the program's %d partitions\n",
              ba->devices, parts);
      rc = BENCH_ERROR;
    }
    co.num_replicas = ba->devices / parts;
  }
  xrt_shape *shapes = NULL; /* a shape-polymorphic entry's, from --input */
  if (!rc && (s = cli_arg_shapes(client, prog, ba->entry, ba->inputs, ba->num_inputs,
                                 &shapes)) != XRT_OK)
    rc = cli_report(s, NULL);
  co.num_arg_shapes = shapes ? ba->num_inputs : 0;
  co.arg_shapes = shapes;
  t0 = now_seconds();
  if (!rc && (s = xrt_compile_program(client, prog, &co, &exe)) != XRT_OK)
    rc = cli_report(s, NULL);
  r.compile_s = now_seconds() - t0;
  free(shapes);
  if (!rc) {
    r.entry = xrt_executable_name(exe);
    r.num_inputs = xrt_executable_num_inputs(exe);
    rc = run_bench(ba, client, exe, mc, &r);
  }
  if (!rc) print_result(ba, &r);
  xrt_executable_release(exe);
  xrt_program_release(prog);
  return rc;
}

int cmd_bench(int argc, char **argv) {
  bench_args ba;
  int rc = parse_bench_args(argc, argv, &ba);
  if (rc < 0) {
    free(ba.inputs);
    return BENCH_OK;
  }
  char *text = NULL;
  size_t len = 0;
  if (!rc && cli_read_file(ba.file, &text, &len)) rc = BENCH_ERROR;
  mem_count mc;
  atomic_init(&mc.in_use, 0);
  atomic_init(&mc.peak, 0);
  xrt_client *client = NULL;
  if (!rc) {
    xrt_client_options opt;
    xrt_client_options_init(&opt);
    opt.num_devices = ba.devices;
    opt.threads_per_device = ba.threads;
    opt.allocator.self = &mc;
    opt.allocator.alloc = count_alloc;
    opt.allocator.free = count_free;
    xrt_status s = xrt_client_create(&opt, &client);
    if (s) rc = cli_report(s, NULL);
  }
  if (!rc) rc = bench_program(&ba, client, &mc, text, len);
  xrt_client_release(client);
  free(text);
  free(ba.inputs);
  fflush(stdout);
  return rc;
}
