/*
 * xrt_main.c - the xrt command-line tool.  MIT licensed; see LICENSE.
 *
 *   xrt run FILE.mlir [--devices N] [--input A.npy]... [--output-dir DIR]
 *                     [--entry NAME]
 *   xrt check FILE.mlir [--split-input-file] [--verbose]
 *   xrt version | xrt --help
 *
 * It uses only the public API in xrt.h, so it doubles as an example of it.
 * Exit codes: 0 success, 1 a check.* op failed, 2 anything else (bad usage,
 * a file that does not parse or compile, a runtime error).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdir */
#endif

#include "xrt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

enum { EXIT_PASS = 0, EXIT_CHECK = 1, EXIT_ERROR = 2 };

static const char usage_text[] =
    "usage: xrt <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE.mlir      compile the entry function, run it on device 0 of a\n"
    "                     simulated client and print its results\n"
    "      --devices N        devices of the simulated client (default 1)\n"
    "      --input A.npy      an argument of the entry function; repeat once\n"
    "                         per argument, in order\n"
    "      --output-dir DIR   also write result K to DIR/result_K.npy\n"
    "      --entry NAME       function to run (default: main, or the only one)\n"
    "  check FILE.mlir    run every check.* op of the file's test functions\n"
    "      --split-input-file split at lines '// -----' and run each chunk\n"
    "      --verbose          also list the chunks that pass\n"
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

/* Prints the last xrt error with its status name; returns the exit code it
 * maps to. */
static int report(xrt_status s, const char *what) {
  fprintf(stderr, "xrt: %s%s%s [%s]\n", what ? what : "", what ? ": " : "",
          xrt_last_error(), xrt_strerror(s));
  return s == XRT_CHECK_FAILED ? EXIT_CHECK : EXIT_ERROR;
}

/* Reads a whole file into a NUL-terminated heap string. */
static int read_file(const char *path, char **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "xrt: %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    len += fread(buf + len, 1, cap - len - 1, f);
    if (len < cap - 1) break;
    char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  int err = !buf || ferror(f);
  int e = errno;
  fclose(f);
  if (err) {
    fprintf(stderr, "xrt: %s: %s\n", path, buf ? strerror(e) : "out of memory");
    free(buf);
    return -1;
  }
  buf[len] = 0;
  *out = buf;
  *out_len = len;
  return 0;
}

/* ======================================================================
 * Printing values
 * ==================================================================== */

enum { PRINT_LIMIT = 1000, PRINT_EDGE = 3, PRINT_LINE = 75 };

/* Makes "1" read as a float ("1.0") and spells non-finite values plainly. */
static void float_finish(char *buf, size_t cap, double v) {
  if (v != v) {
    snprintf(buf, cap, "nan");
  } else if (v - v != 0) {
    snprintf(buf, cap, v < 0 ? "-inf" : "inf");
  } else if (!strpbrk(buf, ".e")) {
    size_t n = strlen(buf);
    if (n + 2 < cap) memcpy(buf + n, ".0", 3);
  }
}

/* The shortest %g spelling that reads back as the same value of the type,
 * so 0.1f prints as 0.1 rather than 0.100000001. */
static void format_float(xrt_dtype t, const unsigned char *p, char *buf, size_t cap) {
  double v;
  int maxp;
  uint16_t h = 0;
  float f = 0;
  switch (t) {
  case XRT_F16: memcpy(&h, p, 2); v = xrt_f16_to_f32(h); maxp = 5; break;
  case XRT_BF16: memcpy(&h, p, 2); v = xrt_bf16_to_f32(h); maxp = 4; break;
  case XRT_F32: memcpy(&f, p, 4); v = f; maxp = 9; break;
  default: memcpy(&v, p, 8); maxp = 17; break;
  }
  if (v == v && v - v == 0) {
    for (int prec = 1; prec <= maxp; prec++) {
      snprintf(buf, cap, "%.*g", prec, v);
      double back = strtod(buf, NULL);
      int same = t == XRT_F16    ? xrt_f64_to_f16(back) == h
                 : t == XRT_BF16 ? xrt_f64_to_bf16(back) == h
                 : t == XRT_F32  ? (float)back == f
                                 : back == v;
      if (same) break;
    }
  }
  float_finish(buf, cap, v);
}

/* One element as text: integers in decimal, floats shortest, complex as
 * (re,im), pred as true/false, f8/f6/f4 as their bit patterns. */
static void format_elem(xrt_dtype t, const unsigned char *p, char *buf, size_t cap) {
  int8_t s8; int16_t s16; int32_t s32; int64_t s64;
  uint16_t u16; uint32_t u32; uint64_t u64;
  switch (t) {
  case XRT_PRED: snprintf(buf, cap, "%s", p[0] ? "true" : "false"); return;
  case XRT_S2: case XRT_S4: case XRT_S8:
    memcpy(&s8, p, 1); snprintf(buf, cap, "%d", s8); return;
  case XRT_U2: case XRT_U4: case XRT_U8: snprintf(buf, cap, "%u", p[0]); return;
  case XRT_S16: memcpy(&s16, p, 2); snprintf(buf, cap, "%d", s16); return;
  case XRT_U16: memcpy(&u16, p, 2); snprintf(buf, cap, "%u", u16); return;
  case XRT_S32: memcpy(&s32, p, 4); snprintf(buf, cap, "%" PRId32, s32); return;
  case XRT_U32: memcpy(&u32, p, 4); snprintf(buf, cap, "%" PRIu32, u32); return;
  case XRT_S64: memcpy(&s64, p, 8); snprintf(buf, cap, "%" PRId64, s64); return;
  case XRT_U64: memcpy(&u64, p, 8); snprintf(buf, cap, "%" PRIu64, u64); return;
  case XRT_F16: case XRT_BF16: case XRT_F32: case XRT_F64:
    format_float(t, p, buf, cap);
    return;
  case XRT_C64: case XRT_C128: {
    xrt_dtype part = t == XRT_C64 ? XRT_F32 : XRT_F64;
    size_t half = t == XRT_C64 ? 4 : 8;
    char re[40], im[40];
    format_float(part, p, re, sizeof re);
    format_float(part, p + half, im, sizeof im);
    snprintf(buf, cap, "(%s,%s)", re, im);
    return;
  }
  default: snprintf(buf, cap, "0x%02x", p[0]); return; /* f8/f6/f4 bits */
  }
}

typedef struct printer {
  const xrt_shape *shape;
  const unsigned char *data;
  size_t esize;
  int summarize;              /* show only PRINT_EDGE items at each end */
  int width;                  /* column width: the widest element shown */
  int col;                    /* current output column, for wrapping */
  int64_t stride[XRT_MAX_RANK];
} printer;

/* The index after i along a dimension of size n, skipping the middle when
 * summarizing; n when done.  *gap is set when the skip happens. */
static int64_t next_index(const printer *pr, int64_t n, int64_t i, int *gap) {
  *gap = 0;
  i++;
  if (pr->summarize && n > 2 * PRINT_EDGE && i == PRINT_EDGE) {
    *gap = 1;
    return n - PRINT_EDGE;
  }
  return i;
}

static void measure(printer *pr, int d, int64_t off) {
  int64_t n = pr->shape->dims[d];
  int gap;
  for (int64_t i = 0; i < n; i = next_index(pr, n, i, &gap)) {
    int64_t at = off + i * pr->stride[d];
    if (d + 1 < pr->shape->rank) {
      measure(pr, d + 1, at);
    } else {
      char buf[96];
      format_elem(pr->shape->dtype, pr->data + (size_t)at * pr->esize, buf, sizeof buf);
      int w = (int)strlen(buf);
      if (w > pr->width) pr->width = w;
    }
  }
}

static void emit(printer *pr, FILE *out, const char *s) {
  fputs(s, out);
  pr->col += (int)strlen(s);
}

static void newline(printer *pr, FILE *out, int lines, int indent) {
  for (int i = 0; i < lines; i++) fputc('\n', out);
  fprintf(out, "%*s", indent, "");
  pr->col = indent;
}

/* Prints the innermost dimension, wrapping lines numpy-style. */
static void print_row(printer *pr, FILE *out, int d, int64_t off) {
  int64_t n = pr->shape->dims[d];
  int gap = 0;
  for (int64_t i = 0; i < n; i = next_index(pr, n, i, &gap)) {
    char buf[96], cell[128];
    format_elem(pr->shape->dtype, pr->data + (size_t)(off + i * pr->stride[d]) * pr->esize,
                buf, sizeof buf);
    snprintf(cell, sizeof cell, "%*s", pr->width, buf);
    if (i > 0) {
      emit(pr, out, ",");
      if (gap) {
        emit(pr, out, " ...,");
      }
      if (pr->col + 1 + (int)strlen(cell) + 1 > PRINT_LINE) newline(pr, out, 1, d + 1);
      else emit(pr, out, " ");
    }
    emit(pr, out, cell);
  }
}

static void print_dim(printer *pr, FILE *out, int d, int64_t off) {
  emit(pr, out, "[");
  if (d + 1 == pr->shape->rank) {
    print_row(pr, out, d, off);
  } else {
    int64_t n = pr->shape->dims[d];
    int gap = 0;
    int blank = pr->shape->rank - d - 1; /* numpy: more newlines between bigger blocks */
    for (int64_t i = 0; i < n; i = next_index(pr, n, i, &gap)) {
      if (i > 0) {
        emit(pr, out, ",");
        newline(pr, out, blank, d + 1);
        if (gap) {
          emit(pr, out, "...,");
          newline(pr, out, blank, d + 1);
        }
      }
      print_dim(pr, out, d + 1, off + i * pr->stride[d]);
    }
  }
  emit(pr, out, "]");
}

/* Prints a host copy of an array: nested brackets, summarized when large. */
static void print_array(FILE *out, const xrt_shape *shape, const void *data) {
  printer pr;
  memset(&pr, 0, sizeof pr);
  pr.shape = shape;
  pr.data = data;
  pr.esize = xrt_dtype_size(shape->dtype);
  pr.summarize = xrt_shape_numel(shape) > PRINT_LIMIT;
  if (shape->rank == 0) {
    char buf[96];
    format_elem(shape->dtype, data, buf, sizeof buf);
    fprintf(out, "%s\n", buf);
    return;
  }
  int64_t stride = 1;
  for (int d = shape->rank - 1; d >= 0; d--) {
    pr.stride[d] = stride;
    stride *= shape->dims[d];
  }
  if (xrt_shape_numel(shape) > 0) measure(&pr, 0, 0);
  print_dim(&pr, out, 0, 0);
  fputc('\n', out);
}

/* Prints "result[k]: tensor<...>" and the values of one output. */
static xrt_status print_result(int k, xrt_buffer *buf) {
  xrt_shape shape;
  xrt_status s = xrt_buffer_shape(buf, &shape);
  if (s) return s;
  char type[256];
  xrt_shape_format(&shape, type, sizeof type);
  size_t bytes = xrt_buffer_bytes(buf);
  void *host = malloc(bytes ? bytes : 1);
  if (!host) {
    fprintf(stderr, "xrt: out of memory reading result %d\n", k);
    return XRT_RESOURCE_EXHAUSTED;
  }
  s = bytes ? xrt_buffer_to_host(buf, host, bytes) : XRT_OK;
  if (!s) {
    printf("result[%d]: %s\n", k, type);
    print_array(stdout, &shape, host);
  }
  free(host);
  return s;
}

/* ======================================================================
 * xrt run
 * ==================================================================== */

typedef struct run_args {
  const char *file;
  const char *entry;
  const char *output_dir;
  int devices;
  int num_inputs;
  const char **inputs; /* borrowed from argv */
} run_args;

/* Matches "--name VALUE" or "--name=VALUE"; advances *i past the value. */
static int option_value(int argc, char **argv, int *i, const char *name,
                        const char **value) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (a[n] != 0) return 0;
  if (*i + 1 >= argc) {
    *value = NULL;
    return 1;
  }
  *value = argv[++*i];
  return 1;
}

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
    if (option_value(argc, argv, &i, "--devices", &v)) {
      if (!v || parse_devices(v, &ra->devices))
        return usage_error("--devices needs a number from 1 to 1024, not '%s'", v ? v : "");
    } else if (option_value(argc, argv, &i, "--input", &v)) {
      if (!v) return usage_error("%s needs a file", "--input");
      ra->inputs[ra->num_inputs++] = v;
    } else if (option_value(argc, argv, &i, "--output-dir", &v)) {
      if (!v) return usage_error("%s needs a directory", "--output-dir");
      ra->output_dir = v;
    } else if (option_value(argc, argv, &i, "--entry", &v)) {
      if (!v) return usage_error("%s needs a function name", "--entry");
      ra->entry = v;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return usage_error("run: unknown option '%s'", argv[i]);
    } else if (ra->file) {
      return usage_error("run: more than one program file ('%s')", argv[i]);
    } else {
      ra->file = argv[i];
    }
  }
  if (!ra->file) return usage_error("%s: no program file given", "run");
  return 0;
}

/* Loads the --input files onto dev, checking them against the entry's
 * signature so that mistakes are reported by file name. */
static int load_inputs(const run_args *ra, xrt_client *client, xrt_device *dev,
                       xrt_executable *exe, xrt_buffer **args) {
  int want = xrt_executable_num_inputs(exe);
  if (want != ra->num_inputs) {
    fprintf(stderr, "xrt: @%s takes %d argument%s but %d --input file%s given\n",
            xrt_executable_name(exe), want, want == 1 ? "" : "s", ra->num_inputs,
            ra->num_inputs == 1 ? " was" : "s were");
    for (int i = 0; i < want; i++) {
      xrt_shape s;
      char type[256] = "?";
      if (!xrt_executable_input_shape(exe, i, &s)) xrt_shape_format(&s, type, sizeof type);
      fprintf(stderr, "  argument %d: %s\n", i, type);
    }
    return EXIT_ERROR;
  }
  for (int i = 0; i < want; i++) {
    xrt_status s = xrt_buffer_from_npy(client, dev, ra->inputs[i], &args[i]);
    if (s) return report(s, NULL);
    xrt_shape got, expect;
    if (xrt_buffer_shape(args[i], &got) || xrt_executable_input_shape(exe, i, &expect))
      return report(xrt_last_status(), NULL);
    char tg[256], te[256];
    xrt_shape_format(&got, tg, sizeof tg);
    xrt_shape_format(&expect, te, sizeof te);
    if (strcmp(tg, te) != 0) {
      fprintf(stderr, "xrt: %s holds %s but argument %d of @%s is %s\n", ra->inputs[i],
              tg, i, xrt_executable_name(exe), te);
      return EXIT_ERROR;
    }
  }
  return 0;
}

/* Creates dir if it does not exist (one level, like mkdir). */
static int ensure_dir(const char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    fprintf(stderr, "xrt: --output-dir %s is not a directory\n", dir);
    return -1;
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "xrt: cannot create %s: %s\n", dir, strerror(errno));
    return -1;
  }
  return 0;
}

static int write_results(const char *dir, xrt_buffer **outs, int n) {
  if (ensure_dir(dir)) return EXIT_ERROR;
  size_t cap = strlen(dir) + 32;
  char *path = malloc(cap);
  if (!path) return EXIT_ERROR;
  int rc = 0;
  for (int k = 0; k < n && !rc; k++) {
    snprintf(path, cap, "%s/result_%d.npy", dir, k);
    xrt_status s = xrt_buffer_to_npy(outs[k], path);
    if (s) rc = report(s, NULL);
  }
  free(path);
  return rc;
}

/* Compiles, loads inputs, executes and prints; everything it creates is
 * released by the caller through the client. */
static int run_program(const run_args *ra, xrt_client *client, const char *text,
                       size_t len) {
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.entry = ra->entry;
  co.filename = ra->file;
  xrt_executable *exe = NULL;
  xrt_status s = xrt_compile(client, text, len, &co, &exe);
  if (s) return report(s, NULL);
  xrt_device *dev = xrt_client_device(client, 0);
  int nin = xrt_executable_num_inputs(exe), nout = xrt_executable_num_outputs(exe);
  xrt_buffer **args = calloc((size_t)(nin > 0 ? nin : 1), sizeof *args);
  xrt_buffer **outs = calloc((size_t)(nout > 0 ? nout : 1), sizeof *outs);
  int rc = !args || !outs ? EXIT_ERROR : 0;
  if (!rc) rc = load_inputs(ra, client, dev, exe, args);
  if (!rc) {
    s = xrt_execute(exe, dev, args, nin, outs, nout, NULL);
    if (s) rc = report(s, NULL);
  }
  for (int k = 0; !rc && k < nout; k++) {
    s = print_result(k, outs[k]);
    if (s) rc = report(s, NULL);
  }
  if (!rc && ra->output_dir) rc = write_results(ra->output_dir, outs, nout);
  for (int i = 0; args && i < nin; i++) xrt_buffer_release(args[i]);
  for (int k = 0; outs && k < nout; k++) xrt_buffer_release(outs[k]);
  free(args);
  free(outs);
  xrt_executable_release(exe);
  return rc;
}

static int cmd_run(int argc, char **argv) {
  run_args ra;
  int rc = parse_run_args(argc, argv, &ra);
  char *text = NULL;
  size_t len = 0;
  if (!rc && read_file(ra.file, &text, &len)) rc = EXIT_ERROR;
  xrt_client *client = NULL;
  if (!rc) {
    xrt_client_options opt;
    xrt_client_options_init(&opt);
    opt.num_devices = ra.devices;
    xrt_status s = xrt_client_create(&opt, &client);
    if (s) rc = report(s, NULL);
  }
  if (!rc) rc = run_program(&ra, client, text, len);
  xrt_client_release(client);
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

/* Compiles and runs one function of a parsed chunk with no arguments. */
static chunk_result check_entry(const check_ctx *cx, int line, const xrt_program *prog,
                                const xrt_compile_options *base, const char *entry) {
  xrt_compile_options co = *base;
  co.entry = entry;
  xrt_executable *exe = NULL;
  xrt_status s = xrt_compile_program(cx->client, prog, &co, &exe);
  if (s) return chunk_fail(cx, line, s, xrt_last_error());
  int nin = xrt_executable_num_inputs(exe), nout = xrt_executable_num_outputs(exe);
  chunk_result r = CHUNK_PASS;
  if (nin != 0) {
    char msg[512];
    snprintf(msg, sizeof msg,
             "function @%s takes %d argument%s; check runs functions without "
             "arguments (use 'xrt run --input')",
             xrt_executable_name(exe), nin, nin == 1 ? "" : "s");
    r = chunk_fail(cx, func_line(prog, xrt_executable_name(exe), line),
                   XRT_INVALID_ARGUMENT, msg);
  } else {
    xrt_buffer **outs = calloc((size_t)(nout > 0 ? nout : 1), sizeof *outs);
    if (!outs) {
      r = chunk_fail(cx, line, XRT_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      s = xrt_execute(exe, xrt_client_device(cx->client, 0), NULL, 0, outs, nout, NULL);
      if (s) r = chunk_fail(cx, line, s, xrt_last_error());
      for (int k = 0; !s && k < nout; k++) xrt_buffer_release(outs[k]);
      free(outs);
    }
  }
  xrt_executable_release(exe);
  return r;
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
  xrt_status s = xrt_program_parse(text, len, &co, &prog);
  if (s) return chunk_fail(cx, line, s, xrt_last_error());
  const xrt_ir_module *m = xrt_program_module(prog);
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
  if (r == CHUNK_PASS && cx->verbose) printf("%s:%d: pass\n", cx->file, line);
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

static int cmd_check(int argc, char **argv) {
  const char *file = NULL;
  int split = 0, verbose = 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--split-input-file") == 0 || strcmp(argv[i], "-split-input-file") == 0)
      split = 1;
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
  if (read_file(file, &text, &len)) return EXIT_ERROR;
  check_ctx cx = {file, NULL, verbose};
  xrt_status s = xrt_client_create(NULL, &cx.client);
  if (s) {
    free(text);
    return report(s, NULL);
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
  if (!strcmp(cmd, "run")) return cmd_run(argc, argv);
  if (!strcmp(cmd, "check")) return cmd_check(argc, argv);
  return usage_error("unknown command '%s'", cmd);
}
